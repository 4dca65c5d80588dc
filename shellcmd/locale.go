package shellcmd

import (
	"fmt"
	"slices"

	"github.com/paigasus/helikon/internal/locale"
)

// localeRisk returns why assigning value to name can make a shell read text
// in a character set the analysis does not model (see package
// internal/locale), or "". known reports that value is the static text
// assigned. bash
// reads LC_ALL, LC_CTYPE and LANG again as soon as the line assigns them,
// so an assignment changes how the rest of the line itself is read, and a
// shell the line starts reads its command string in the locale of its
// environment.
func localeRisk(name string, known bool, value string) string {
	switch {
	case name == "LOCPATH":
		return "LOCPATH makes the shells the line starts load locales from a directory the line may write, whose character sets are not known; do not set it"
	case !slices.Contains(locale.CtypeVars, name):
		return ""
	case !known:
		return fmt.Sprintf("%s is given a value that is not known statically (computed, read, looped over or unset, which falls back to another variable), and the locale decides how a shell splits text into characters; set it to C, C.UTF-8 or another UTF-8 locale literally", name)
	case !locale.Safe(value):
		return fmt.Sprintf("%s=%s selects a locale whose character set may read a backslash or a backquote as part of a character, which makes a shell run text this analysis reads as quoted; use C, C.UTF-8 or another UTF-8 locale", name, value)
	}
	return ""
}
