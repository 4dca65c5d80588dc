package ossandbox

import (
	"fmt"
	"strings"
)

// Seatbelt profile parameters. Paths reach the profile only as parameters
// (sandbox-exec -D NAME=VALUE), never spliced into its text, so no path can
// change the profile's meaning.
const (
	seatbeltRootParam = "HELIKON_ROOT"
	seatbeltTmpParam  = "HELIKON_TMP"
	// seatbeltReadOnlyParam, followed by an index, names each read-only
	// path ([Options].ReadOnlyPaths).
	seatbeltReadOnlyParam = "HELIKON_RO_"
)

// seatbeltProfile returns the Seatbelt (SBPL) profile of the macOS backend:
// deny by default; reads allowed everywhere (Seatbelt's read containment
// breaks too much of macOS's dynamic loader and frameworks to be usable for
// general commands); writes allowed only beneath the root and the private
// temporary directory, and to the null and tty devices; process creation and
// signals within the sandbox; network outbound and inbound only when
// allowNetwork is set (which includes Unix sockets: Seatbelt's network
// operations cover both); writes denied again beneath each of readOnly
// read-only paths (the last matching rule decides). Setting a set-user-ID
// or set-group-ID bit (file-write-setugid) is denied even where writes are
// allowed: a later rule overrides an earlier one, and a set-ID program left
// in the root would run as its owner for anyone who can reach it.
func seatbeltProfile(allowNetwork bool, readOnly int) string {
	var b strings.Builder
	b.WriteString(`(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow file-read*)
(allow file-write*
  (subpath (param "` + seatbeltRootParam + `"))
  (subpath (param "` + seatbeltTmpParam + `")))
(deny file-write-setugid)
(allow file-write-data
  (literal "/dev/null")
  (literal "/dev/zero")
  (literal "/dev/dtracehelper")
  (literal "/dev/tty"))
(allow file-ioctl (literal "/dev/dtracehelper") (literal "/dev/tty"))
`)
	for i := range readOnly {
		fmt.Fprintf(&b, "(deny file-write* (subpath (param \"%s%d\")))\n", seatbeltReadOnlyParam, i)
	}
	b.WriteString(`(allow sysctl-read)
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.notification_center")
  (global-name "com.apple.logd")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.coreservices.launchservicesd")
  (global-name "com.apple.trustd.agent"))
(allow ipc-posix-sem)
(allow ipc-posix-shm-read-data ipc-posix-shm-read-metadata (ipc-posix-name "apple.shm.notification_center"))
(allow user-preference-read)
(allow iokit-open (iokit-registry-entry-class "RootDomainUserClient"))
(allow pseudo-tty)
`)
	if allowNetwork {
		b.WriteString(`(allow network-outbound)
(allow network-inbound)
(allow network-bind)
(allow system-socket)
(allow mach-lookup
  (global-name "com.apple.SystemConfiguration.configd")
  (global-name "com.apple.dnssd.service")
  (global-name "com.apple.networkd"))
`)
	}
	return b.String()
}

// seatbeltArgv returns the sandbox-exec command line that runs argv under
// the profile with root, tmp and the read-only paths (absolute) as
// parameters.
func seatbeltArgv(sandboxExec string, allowNetwork bool, root, tmp string, readOnly, argv []string) []string {
	out := []string{sandboxExec,
		"-p", seatbeltProfile(allowNetwork, len(readOnly)),
		"-D", seatbeltRootParam + "=" + root,
		"-D", seatbeltTmpParam + "=" + tmp,
	}
	for i, p := range readOnly {
		out = append(out, "-D", fmt.Sprintf("%s%d=%s", seatbeltReadOnlyParam, i, p))
	}
	out = append(out, "--")
	return append(out, argv...)
}
