package locale

import (
	"slices"
	"testing"
)

func TestSafe(t *testing.T) {
	for v, want := range map[string]bool{
		"": true, "C": true, "POSIX": true, "C.UTF-8": true, "C.utf8": true, "en_US.UTF-8": true,
		"zh_CN.utf-8@pinyin": true, "de_DE.UTF_8": true,
		"zh_CN.GBK": false, "zh_TW": false, "zh_TW.BIG5": false, "zh_HK.BIG5-HKSCS": false, "ja_JP.SJIS": false,
		"en_US": false, "/tmp/x.UTF-8": false, "../x.UTF-8": false, "C.GBK": false, "en_US.ISO-8859-1": false,
		"en_US.UTF-8 ": false, "UTF-8": false,
	} {
		if got := Safe(v); got != want {
			t.Errorf("Safe(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestScrubDropsUnsafeLocales(t *testing.T) {
	env := []string{"PATH=/bin", "LC_ALL=zh_CN.GBK", "LANG=en_US.UTF-8", "LOCPATH=/x", "LC_CTYPE=zh_TW", "LANGUAGE=zh_TW"}
	if got, want := Scrub(env), []string{"PATH=/bin", "LANG=en_US.UTF-8", "LANGUAGE=zh_TW"}; !slices.Equal(got, want) {
		t.Errorf("Scrub = %q, want %q", got, want)
	}
	safe := []string{"PATH=/bin", "LC_ALL=C"}
	if got := Scrub(safe); &got[0] != &safe[0] || len(got) != 2 {
		t.Errorf("Scrub copied an environment it had nothing to drop from: %q", got)
	}
}
