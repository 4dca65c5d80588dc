package backend

import (
	"slices"
	"strings"

	"github.com/paigasus/helikon/internal/locale"
)

// DefaultEnvAllowlist is the environment a backend passes to a command when
// it is given no allowlist: the search path and the home directory.
var DefaultEnvAllowlist = []string{"PATH", "HOME"}

// The variable names that carry credentials or give access to a more
// privileged process (an SSH agent, the session bus, a Docker daemon),
// matched against the upper-cased name. They never pass through an allowlist
// pattern; only an allowlist entry naming the variable exactly lets one
// through. They are plain suffix, prefix and name sets rather than globs
// because every command start checks every variable of the environment.
var (
	secretSuffixes = []string{
		"_KEY", "_APIKEY", "_ACCESS_KEY_ID", "_TOKEN", "_SECRET", "_PAT", "PASSWORD", "_PASSWD", "_PWD", "_PASS",
		"_CREDENTIALS", "_CREDENTIAL", "_AUTH", "_DSN",
	}
	secretPrefixes = []string{"AWS_", "AZURE_", "NPM_CONFIG__AUTH"}
	secretInfixes  = []string{"_SECRET_"}
	secretNames    = map[string]bool{
		"API_KEY": true, "TOKEN": true, "SECRET": true, "DATABASE_URL": true, "NETRC": true,
		"SSH_AUTH_SOCK": true, "SSH_AGENT_PID": true, "GPG_AGENT_INFO": true, "DBUS_SESSION_BUS_ADDRESS": true,
		"DOCKER_HOST": true, "DOCKER_CONFIG": true, "KUBECONFIG": true, "XDG_RUNTIME_DIR": true,
		"GOOGLE_APPLICATION_CREDENTIALS": true,
	}
)

// IsSecretEnv reports whether name is a variable that must not reach a
// command unless an allowlist names it exactly: API keys, tokens, secrets and
// passwords (*_KEY, *_TOKEN, *_SECRET, *PASSWORD, *_PWD, *_PAT, *_DSN,
// DATABASE_URL, …), cloud credentials
// (AWS_*, AZURE_*, GOOGLE_APPLICATION_CREDENTIALS) and handles on more
// privileged processes (SSH_AUTH_SOCK, DBUS_SESSION_BUS_ADDRESS, DOCKER_HOST,
// XDG_RUNTIME_DIR).
func IsSecretEnv(name string) bool {
	u := strings.ToUpper(name)
	if secretNames[u] {
		return true
	}
	has := func(list []string, f func(string, string) bool) bool {
		return slices.ContainsFunc(list, func(x string) bool { return f(u, x) })
	}
	return has(secretSuffixes, strings.HasSuffix) || has(secretPrefixes, strings.HasPrefix) || has(secretInfixes, strings.Contains)
}

// ScrubEnv returns the entries of environ (NAME=value, as from
// [os.Environ]) whose names are allowed, followed by set (NAME=value entries
// that override or add variables, applied last).
//
// An allow entry is a variable name ("PATH") or a name prefix ending in "*"
// ("LC_*"). A variable for which [IsSecretEnv] is true passes only when an
// allow entry names it exactly: "*_TOKEN" in a secret denylist beats "GH_*"
// in an allowlist, "GH_TOKEN" in the allowlist beats both. Entries of environ
// without "=" and duplicate names (the last one wins, as in [os/exec]) are
// handled so that the result holds each name once.
//
// Whatever the allowlist and set say, the result holds no LOCPATH and no
// LC_ALL, LC_CTYPE or LANG naming a locale whose character set is not UTF-8
// (zh_CN.GBK, zh_TW, ja_JP.SJIS): a shell reads its command line in that
// character set, where a backslash or backquote may be part of a character,
// and the command filter (package shellcmd) parses the line as UTF-8 or C
// does. Such a variable is dropped, so the shell falls back to the next one
// or to C.
func ScrubEnv(environ, allow, set []string) []string {
	exact := make(map[string]bool, len(allow))
	var prefixes []string
	for _, a := range allow {
		if p, ok := strings.CutSuffix(a, "*"); ok {
			prefixes = append(prefixes, p)
		} else if a != "" {
			exact[a] = true
		}
	}
	allowed := func(name string) bool {
		if exact[name] {
			return true
		}
		return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(name, p) }) && !IsSecretEnv(name)
	}
	out := make([]string, 0, len(allow)+len(set))
	index := make(map[string]int)
	add := func(kv string) {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return
		}
		if i, dup := index[name]; dup {
			out[i] = kv
			return
		}
		index[name] = len(out)
		out = append(out, kv)
	}
	for _, kv := range environ {
		if name, _, ok := strings.Cut(kv, "="); ok && allowed(name) {
			add(kv)
		}
	}
	for _, kv := range set {
		add(kv)
	}
	return locale.Scrub(out)
}
