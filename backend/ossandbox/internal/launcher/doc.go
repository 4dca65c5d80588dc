// Package launcher is the OS sandbox's launcher for unprivileged callers,
// and the confining steps it shares with root callers' confining thread
// (the read-only mount view, the command's tmpfs, the capability drop, the
// discarded OS thread).
//
// The launcher is the calling program re-executed through /proc/self/exe
// with argv[0] [Arg0] and [Env] set, in a new user and mount namespace (see
// package ossandbox): once per backend as the long-lived launcher
// ([Config].Serve, which confines and starts each command the backend
// sends it over [SocketFD]; see serve_linux.go), or once per command. Its
// init function recognises that role and runs the
// launcher before the rest of the program is initialised: since Go 1.21
// packages are initialised in a defined order ("given the list of all
// packages, sorted by import path, in each step the first uninitialized
// package in the list for which all imports are already initialized is
// initialized"), and this package imports only the standard library's
// low-level packages, golang.org/x/sys/unix and the equally small
// internal/landlock, internal/seccomp and internal/proc/reaper. Its init
// therefore runs before any package that needs net/http, grpc, protobuf,
// SQLite or a model SDK, and a large program that embeds the SDK is
// re-executed as a launcher without paying its own initialisation: the
// launcher's cost does not grow with the packages the program links (the Go
// runtime's own start-up still grows with the binary's size). Keep it so:
// this package must not import anything heavier, and its configuration is a
// small binary encoding ([Config.Encode]), not JSON.
package launcher
