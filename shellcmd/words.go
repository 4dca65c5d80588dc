package shellcmd

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// field is one word of a simple command after quote removal.
//
// The shell's own expansion code (mvdan.cc/sh/v3/expand) needs an
// environment and would silently expand $HOME to "" without one, so quote
// removal is done here: it must tell apart the parts of a word that are known
// before the command runs from those that are not.
type field struct {
	// text is the word with quoting removed. Parts the shell computes at run
	// time (expansions, substitutions) are kept as written.
	text string
	// dynamic reports that text is not the value the program will see: the
	// word holds an expansion, a glob, or a tilde.
	dynamic bool
	// splits reports that the word may become zero or several arguments
	// (an unquoted expansion, a glob, "$@"), so the positions of the words
	// after it are unknown too.
	splits bool
}

// wordField removes quoting from w.
func wordField(w *syntax.Word) field {
	var f field
	var b strings.Builder
	glob := globState{}
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			s := p.Value
			if i == 0 && strings.HasPrefix(s, "~") {
				// Tilde expansion replaces ~ or ~user by a home directory.
				f.dynamic = true
			}
			decodeUnquoted(&b, s, &glob)
		case *syntax.SglQuoted:
			if p.Dollar {
				text, dyn := ansiC(p)
				b.WriteString(text)
				f.dynamic = f.dynamic || dyn
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			if p.Dollar {
				// $"..." is translated through the locale's message
				// catalog at run time.
				f.dynamic = true
				b.WriteString(printNode(p))
				continue
			}
			for _, q := range p.Parts {
				if lit, ok := q.(*syntax.Lit); ok {
					decodeDoubleQuoted(&b, lit.Value)
					continue
				}
				f.dynamic = true
				if quotedSplits(q) {
					f.splits = true
				}
				b.WriteString(printNode(q))
			}
		default:
			// ParamExp, CmdSubst, ArithmExp, ProcSubst, ExtGlob, BraceExp.
			f.dynamic = true
			f.splits = true
			b.WriteString(printNode(p))
		}
	}
	if glob.isGlob() {
		f.dynamic = true
		f.splits = true
	}
	f.text = b.String()
	return f
}

// quotedSplits reports whether a part inside double quotes may still become
// several words: "$@", "${a[@]}", "${!prefix@}".
func quotedSplits(p syntax.WordPart) bool {
	pe, ok := p.(*syntax.ParamExp)
	if !ok {
		return false
	}
	if pe.Param != nil && pe.Param.Value == "@" {
		return true
	}
	if pe.Names != 0 {
		return true
	}
	if w, ok := pe.Index.(*syntax.Word); ok && len(w.Parts) == 1 {
		if lit, ok := w.Parts[0].(*syntax.Lit); ok && lit.Value == "@" {
			return true
		}
	}
	return false
}

// globState tracks unquoted pattern characters across the parts of a word.
type globState struct {
	star     bool // an unquoted * or ?
	openBrkt bool // an unquoted [ seen
	closed   bool // an unquoted ] after an unquoted [
}

func (g *globState) isGlob() bool { return g.star || g.closed }

// decodeUnquoted appends the value of unquoted literal text s: a backslash
// quotes the next character.
func decodeUnquoted(b *strings.Builder, s string, g *globState) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		switch c {
		case '*', '?':
			g.star = true
		case '[':
			g.openBrkt = true
		case ']':
			if g.openBrkt {
				g.closed = true
			}
		}
		b.WriteByte(c)
	}
}

// decodeDoubleQuoted appends the value of literal text inside double quotes,
// where a backslash quotes only $ ` " \ and newline.
func decodeDoubleQuoted(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				b.WriteByte(s[i+1])
				i++
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
}

// ansiC decodes a $'...' string as bash does (ansicstr in lib/sh/strtrans.c,
// as called for $'...'): \cX is a control character, \x takes one or two
// hex digits or any number in braces, \NNN one to three octal digits, an
// unknown escape keeps its backslash, and the string ends at the first NUL
// byte ($'rm\c@x' is rm). A \u or \U escape above 0x7f becomes text that
// depends on the locale, so the word is then reported as dynamic.
func ansiC(p *syntax.SglQuoted) (string, bool) {
	src := p.Value
	var b strings.Builder
	dynamic := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c != '\\' || i+1 >= len(src) {
			b.WriteByte(c)
			continue
		}
		i++
		c = src[i]
		if v, ok := ansiCByte[c]; ok {
			b.WriteByte(v)
			continue
		}
		switch c {
		case '0', '1', '2', '3', '4', '5', '6', '7':
			i = ansiCOctal(&b, src, i)
		case 'x':
			i = ansiCHex(&b, src, i)
		case 'u', 'U':
			var locale bool
			i, locale = ansiCUnicode(&b, src, i)
			dynamic = dynamic || locale
		case 'c':
			i = ansiCControl(&b, src, i)
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	s := b.String()
	// Bash ends the string at a NUL byte.
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return s, dynamic
}

// ansiCByte maps the letters of the $'...' escapes that stand for one
// fixed byte to that byte.
var ansiCByte = map[byte]byte{
	'a': '\a', 'b': '\b', 'e': 0x1b, 'E': 0x1b, 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v',
	'\\': '\\', '\'': '\'', '"': '"', '?': '?',
}

// The ansiC* escape decoders below are given src with i at the letter after
// the backslash; each writes what the escape stands for to b and returns
// the index of the escape's last byte.

// ansiCOctal decodes \NNN, one to three octal digits, modulo 256.
func ansiCOctal(b *strings.Builder, src string, i int) int {
	v := int(src[i] - '0')
	for n := 0; n < 2 && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '7'; n++ {
		i++
		v = (v*8 + int(src[i]-'0')) & 0xff
	}
	b.WriteByte(byte(v))
	return i
}

// ansiCHex decodes \xHH, one or two hex digits, or \x{H...}, any number
// of them, modulo 256; \x without a digit is kept as it is.
func ansiCHex(b *strings.Builder, src string, i int) int {
	v, n := 0, 0
	braces := i+1 < len(src) && src[i+1] == '{'
	if braces {
		i++
	}
	for (braces || n < 2) && i+1 < len(src) && isHex(src[i+1]) {
		i++
		v = (v*16 + hexVal(src[i])) & 0xff
		n++
	}
	switch {
	case braces:
		if i+1 < len(src) && src[i+1] == '}' {
			i++
		}
		b.WriteByte(byte(v))
	case n == 0:
		b.WriteString("\\x")
	default:
		b.WriteByte(byte(v))
	}
	return i
}

// ansiCUnicode decodes \uHHHH and \UHHHHHHHH (up to four or eight hex
// digits); without a digit the escape is kept as it is. It also reports
// whether the character is above 0x7f, whose bytes depend on the locale.
func ansiCUnicode(b *strings.Builder, src string, i int) (int, bool) {
	c := src[i]
	max := 4
	if c == 'U' {
		max = 8
	}
	v, n := 0, 0
	for n < max && i+1 < len(src) && isHex(src[i+1]) {
		i++
		v = v*16 + hexVal(src[i])
		n++
	}
	switch {
	case n == 0:
		b.WriteByte('\\')
		b.WriteByte(c)
	case v <= 0x7f:
		b.WriteByte(byte(v))
	default:
		b.WriteRune(rune(v))
		return i, true
	}
	return i, false
}

// ansiCControl decodes \cX, the control character of X (\c? is DEL, \c\\
// control-backslash); \c at the end of the string is kept as it is.
func ansiCControl(b *strings.Builder, src string, i int) int {
	if i+1 >= len(src) {
		b.WriteString("\\c")
		return i
	}
	i++
	x := src[i]
	if x == '\\' && i+1 < len(src) && src[i+1] == '\\' {
		i++ // $'\c\\' is control-backslash
	}
	if x == '?' {
		b.WriteByte(0x7f)
	} else {
		b.WriteByte(x & 0x1f)
	}
	return i
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

// printNode returns the source form of n.
func printNode(n syntax.Node) string {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, n); err != nil {
		return "?"
	}
	return b.String()
}

// maxBraceWords bounds the words one brace expansion may produce here, so
// that {1..1000000000} cannot exhaust memory; a larger one is treated as a
// word computed at run time.
const maxBraceWords = 1024

// maxBraceTotal bounds the words all brace expansions of one analysis may
// produce, so that a long line of words like {a,b}{c,d}... (each under
// maxBraceWords) cannot make the analysis take seconds and hold millions of
// strings; once it is spent, further brace words count as computed at run
// time, like one expansion over maxBraceWords.
const maxBraceTotal = 1 << 14

// wordFields returns the fields of words, brace expansion applied (bash), and
// also, when some word had braces, the fields without it (POSIX sh, which has
// no brace expansion). Both are analysed, so a filter holds under either
// shell.
//
// budget is what is left of maxBraceTotal; expansions are taken from it.
func wordFields(words []*syntax.Word, budget *int) [][]field {
	plain := make([]field, 0, len(words))
	var expanded []field
	braces := false
	for _, w := range words {
		f := wordField(w)
		plain = append(plain, f)
		if !hasBraceCandidate(w) {
			expanded = append(expanded, f)
			continue
		}
		cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
		if !syntax.SplitBraces(cp) {
			expanded = append(expanded, f)
			continue
		}
		var ews []*syntax.Word
		tooMany := false
		for ew, err := range expand.BracesSeq(nil, cp) {
			if err != nil || len(ews) >= min(maxBraceWords, *budget) {
				tooMany = true
				break
			}
			ews = append(ews, ew)
		}
		*budget -= len(ews)
		if tooMany {
			// Not expanded: the words are unknown, like an expansion's.
			braces = true
			expanded = append(expanded, field{text: f.text, dynamic: true, splits: true})
			continue
		}
		if len(ews) == 1 {
			if ef := wordField(ews[0]); ef.text == f.text {
				expanded = append(expanded, f) // "{}" and the like
				continue
			}
		}
		braces = true
		for _, ew := range ews {
			expanded = append(expanded, wordField(ew))
		}
	}
	if !braces {
		return [][]field{plain}
	}
	return [][]field{expanded, plain}
}

// hasBraceCandidate is a cheap test that spares most words a copy.
func hasBraceCandidate(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if lit, ok := p.(*syntax.Lit); ok && strings.Contains(lit.Value, "{") {
			return true
		}
	}
	return false
}

// staticText returns the value of w when it holds no expansion.
func staticText(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", true
	}
	f := wordField(w)
	return f.text, !f.dynamic
}
