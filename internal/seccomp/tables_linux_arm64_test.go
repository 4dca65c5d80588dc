package seccomp

// nativeOnly lists the table entries that exist only on this architecture.
var nativeOnly = map[string]uintptr{}
