// Package locale tells the locales in which a shell splits text into the
// characters a UTF-8 or byte-wise parser sees from those in which it does
// not.
//
// bash splits its input into characters by the character set of LC_ALL,
// else LC_CTYPE, else LANG. In GBK, BIG5, BIG5-HKSCS, SJIS and the like the
// second byte of a two-byte character may be 0x5C (\) or 0x60 (`): the
// UTF-8 bytes of 中 followed by \ read there as two characters, the
// backslash swallowed, so `echo 中\; rm x` runs rm where bash in UTF-8 or C
// (and the parser of package shellcmd) sees an escaped ;.
package locale

import (
	"regexp"
	"strings"
	"sync"
)

// CtypeVars are the variables that choose the character set, in the order
// glibc consults them.
var CtypeVars = []string{"LC_ALL", "LC_CTYPE", "LANG"}

// name is a locale name as glibc reads it:
// language[_territory][.codeset][@modifier]. It is compiled on first use, not
// when the package is initialised, which every start of a program that links
// a backend would pay (0.13 ms, a tenth of the helikon binary's inits).
var name = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z]+(_[A-Za-z0-9]+)?(\.([A-Za-z0-9_-]+))?(@[A-Za-z0-9_=,;-]+)?$`)
})

// Safe reports whether a shell reading text in the locale named value (a
// value of LC_ALL, LC_CTYPE or LANG) splits it into the characters a UTF-8
// or byte-wise parser sees: "" (unset), C and POSIX (bytes), and names
// whose codeset is UTF-8 (C.UTF-8, en_US.utf8, zh_CN.UTF-8@pinyin). A name
// without a codeset (zh_TW is BIG5 on glibc) or with another one
// (zh_CN.GBK) is not safe. It assumes the system's locales are what their
// names say; LOCPATH can break that (see [Scrub]).
func Safe(value string) bool {
	switch value {
	case "", "C", "POSIX":
		return true
	}
	m := name().FindStringSubmatch(value)
	if m == nil {
		return false
	}
	codeset := strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(m[3]))
	return codeset == "utf8"
}

// Scrub returns env (NAME=value entries) without the entries a shell
// started with it would read text through in another character set than
// UTF-8 or C: LC_ALL, LC_CTYPE and LANG naming a locale that is not [Safe],
// and LOCPATH, which can make any name load a locale built from any
// character map (localedef -f GBK DIR/en_US.UTF-8). It returns env itself
// when nothing is removed.
func Scrub(env []string) []string {
	drop := func(kv string) bool {
		n, v, _ := strings.Cut(kv, "=")
		if n == "LOCPATH" {
			return true
		}
		for _, c := range CtypeVars {
			if n == c {
				return !Safe(v)
			}
		}
		return false
	}
	out := env
	for i, kv := range env {
		if drop(kv) {
			out = append([]string(nil), env[:i]...)
			for _, kv := range env[i+1:] {
				if !drop(kv) {
					out = append(out, kv)
				}
			}
			break
		}
	}
	return out
}
