package mcptools

// ResultJSON exposes resultJSON to the fuzz tests.
var ResultJSON = resultJSON
