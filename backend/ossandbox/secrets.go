package ossandbox

import (
	"path/filepath"
	"slices"
)

// SystemSecrets are the files and directories under the readable system
// paths that hold the machine's own secrets: password and group hashes
// (with their backups), SSH host keys, TLS private keys, Kerberos keytabs.
// They are readable only by root (or a group such as shadow), so an
// unprivileged caller's commands cannot read them anyway; a root caller's
// commands, which run as uid 0 and own those files, could. For root callers
// each is masked in the command's mount namespace (see the package
// documentation), so opening a file fails with EACCES and a directory is
// empty. Entries are glob patterns, expanded by [New].
var SystemSecrets = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/security/opasswd",
	"/etc/ssh/ssh_host_*key",
	"/etc/ssl/private",
	"/etc/krb5.keytab",
	"/etc/sudoers", "/etc/sudoers.d",
}

// systemSecrets expands patterns (globs) into the paths that exist now,
// sorted and without duplicates. A pattern that is not a valid glob is
// taken as a path.
func systemSecrets(patterns []string) []string {
	var out []string
	for _, p := range patterns {
		m, err := filepath.Glob(p)
		if err != nil {
			m = []string{p}
		}
		out = append(out, m...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
