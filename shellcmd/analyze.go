package shellcmd

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/paigasus/helikon"
	"mvdan.cc/sh/v3/syntax"
)

// DefaultMaxDepth is how many shell layers deep Analyze follows command
// strings (sh -c, bash -c, trap actions, here-documents fed to a shell):
// deeper nesting is reported as unresolved. Four covers every realistic
// command while bounding the work an adversarial input can cause.
const DefaultMaxDepth = 4

// Options configures Analyze. The zero value means the defaults.
type Options struct {
	// MaxDepth bounds the nesting of command strings that are parsed in
	// turn; 0 means DefaultMaxDepth.
	MaxDepth int
	// Dir is the absolute directory the line starts in. Relative names of
	// programs, scripts and start-up files are resolved against it to find
	// those under /proc and /dev (see the package documentation). "" means
	// unknown: relative names are then taken to lead outside /proc and /dev
	// unless they go up with .. or the line changes directory.
	Dir string
}

// Analysis is what a shell command line would run, as far as it can be known
// before the line runs.
type Analysis struct {
	// Commands is every simple command the line may run, in source order,
	// each with its argument vector as the shell passes it (quotes removed;
	// a word the shell expands at run time is kept as written, such as
	// $HOME). A wrapper and the program it runs are both listed: "sudo -u x
	// rm f" gives [sudo -u x rm f] and [rm f]. Builtins (cd, echo, export)
	// are listed like any program. Commands in branches that may never run
	// are listed too.
	Commands []helikon.Command
	// Writes lists the targets of redirections that write (>, >>, >|, &>,
	// &>>, <>, >&file), quotes removed. A target the shell computes at run
	// time is kept as written and WriteUnresolved says so.
	Writes []string
	// Unresolved, when not empty, says why some program the line may run
	// cannot be known statically. Commands is then incomplete and a filter
	// must fail closed.
	Unresolved string
	// WriteUnresolved, when not empty, says why some write target cannot be
	// known statically (an expansion such as > "$f").
	WriteUnresolved string
	// DirUnknown, when not empty, says why some command may run in a
	// directory the analysis cannot follow: after a cd or pushd to a
	// directory computed at run time, ~, -, / or through .. after a
	// directory name, after CDPATH is set, or under a wrapper that changes
	// directory (env -C, sudo -D, find -execdir; see the package
	// documentation). It does not make the line unresolved: the caller
	// decides what a relative name is worth then (the policy-file guard
	// refuses one that may name a policy file, see
	// [helikon.Command].DirUnknown).
	DirUnknown string

	// dynamic[i][j] reports that Commands[i].Args[j] is not known statically;
	// filters use it to fail closed on leading-argument patterns.
	dynamic [][]bool
	// writeDynamic[i] reports that Writes[i] is computed at run time.
	writeDynamic []bool
}

// WriteComputed reports whether Writes[i] is computed at run time (> "$f"),
// so that the file it names is not known.
func (a *Analysis) WriteComputed(i int) bool {
	return i < len(a.writeDynamic) && a.writeDynamic[i]
}

// Targets returns the commands and the unresolved reason in the form the
// permission pipeline matches Bash(...) rules against. Paths are left to the
// caller, which knows the sandbox root that Writes are relative to.
func (a *Analysis) Targets() helikon.Targets {
	return helikon.Targets{Commands: a.Commands, Unresolved: a.Unresolved}
}

// Programs returns the program name of each command (see
// [helikon.Command.Program]), in order, duplicates kept.
func (a *Analysis) Programs() []string {
	out := make([]string, len(a.Commands))
	for i, c := range a.Commands {
		out[i] = c.Program()
	}
	return out
}

// Analyze parses command as bash and reports every program it would run,
// with the default options.
func Analyze(command string) *Analysis {
	return Options{}.Analyze(command)
}

// Analyze parses command as bash and reports every program it would run.
func (o Options) Analyze(command string) *Analysis {
	a := &analyzer{maxDepth: o.MaxDepth, res: &Analysis{}, vars: newVarFlow(), listed: map[string]bool{}, braceBudget: maxBraceTotal}
	if a.maxDepth <= 0 {
		a.maxDepth = DefaultMaxDepth
	}
	if path.IsAbs(o.Dir) {
		a.dir = path.Clean(o.Dir)
	}
	a.script(command, syntax.LangBash, 0, "the command")
	a.vars.finish(a)
	a.finishPaths()
	a.res.DirUnknown = a.cwd.unknown
	if _, home := a.vars.numeric["HOME"]; home && a.pathTilde {
		a.unresolved("PATH holds a ~ directory and the line sets HOME, which decides where it leads; write the directories literally")
	}
	a.finishGit()
	return a.res
}

var zshQualifier = regexp.MustCompile(`[*?\])]\(`)

type analyzer struct {
	maxDepth int
	res      *Analysis
	vars     *varFlow
	// listed holds every command listed so far; while dedup is set (the
	// POSIX reading of ((...)) is walked) only new ones are added.
	listed map[string]bool
	dedup  bool
	// braceBudget is what is left of maxBraceTotal.
	braceBudget int
	// dir is Options.Dir when it is absolute, cleaned; cwd what is known of
	// the directories commands run in (see paths.go).
	dir string
	cwd cwdState
	// pathTilde reports a PATH element starting with ~.
	pathTilde bool
	// git holds what git's subcommands depend on (see git.go).
	git gitState
}

// unresolved records the first reason a program cannot be known.
func (a *analyzer) unresolved(format string, args ...any) {
	if a.res.Unresolved == "" {
		a.res.Unresolved = fmt.Sprintf(format, args...)
	}
}

func (a *analyzer) addCommand(fields []field) {
	c := helikon.Command{Args: make([]string, len(fields))}
	dyn := make([]bool, len(fields))
	for i, f := range fields {
		c.Args[i] = f.text
		dyn[i] = f.dynamic
		if f.dynamic {
			c.Dynamic = dyn
		}
	}
	key := strings.Join(c.Args, "\x00")
	if a.dedup && a.listed[key] {
		return
	}
	a.listed[key] = true
	a.res.Commands = append(a.res.Commands, c)
	a.res.dynamic = append(a.res.dynamic, dyn)
}

// script parses src and analyses it. depth counts the command strings
// entered so far; what names the string for messages.
func (a *analyzer) script(src string, lang syntax.LangVariant, depth int, what string) {
	if depth > a.maxDepth {
		a.unresolved("%s nests shell command strings more than %d deep; run the inner command directly", what, a.maxDepth)
		return
	}
	if len(src) > maxScriptBytes {
		// The parser recurses once per nesting level: 512 KiB of "$("
		// overflow the goroutine's stack, which crashes the program.
		a.unresolved("%s is %d bytes long, more than the %d helikon analyses; split it up (write large files with the Write tool)", what, len(src), maxScriptBytes)
		return
	}
	if strings.IndexByte(src, 0) >= 0 {
		// A shell reads a -c string as a C string, and a program's
		// arguments cannot hold NUL at all: what runs is not this text.
		a.unresolved("%s contains a NUL byte; remove it", what)
		return
	}
	if lang == syntax.LangZsh && zshQualifier.MatchString(src) {
		// A glob qualifier such as *(e:'rm x':) or *(+f) runs code; zsh
		// support in the parser is experimental, so any ( right after a
		// pattern character is refused.
		a.unresolved("%s may use a zsh glob qualifier, which can run commands; use bash", what)
		return
	}
	f, ok := a.parse(src, lang, what, "fix the syntax")
	if !ok {
		return
	}
	a.walk(f, depth, src)
	if joined, ok := joinContinuations(src); ok {
		a.joinedReading(joined, lang, depth, what)
	}
}

// parse parses src, or marks the analysis unresolved, saying what could not
// be parsed (what) and what to do instead (fix), or that the tree nests too
// deep to walk.
func (a *analyzer) parse(src string, lang syntax.LangVariant, what, fix string) (*syntax.File, bool) {
	f, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(src), "")
	if err != nil {
		a.unresolved("cannot parse %s: %v; %s", what, err, fix)
		return nil, false
	}
	if treeDepth(f) > maxTreeDepth {
		a.unresolved("%s nests constructs more than %d syntax levels deep; split it into simpler commands", what, maxTreeDepth)
		return nil, false
	}
	return f, true
}

// joinedReading analyses src with its line continuations removed. bash
// removes a backslash-newline before it tokenizes, also inside double
// quotes and in the lines of an unquoted here-document, but the parser
// does not everywhere: "$\<newline>(rm x)" is a command substitution and a
// here-document line EO\<newline>F ends the document in bash. What this
// reading adds is listed too (removing a continuation inside single quotes,
// a quoted here-document or a comment, where bash keeps it, can only make
// this reading list more).
func (a *analyzer) joinedReading(src string, lang syntax.LangVariant, depth int, what string) {
	f, ok := a.parse(src, lang, what+" with its line continuations (backslash-newline) joined, as bash reads it", "write it without them")
	if !ok {
		return
	}
	outer := a.dedup
	a.dedup = true
	a.walk(f, depth, src)
	a.dedup = outer
}

// joinContinuations removes each backslash-newline whose backslash is not
// itself escaped, and reports whether there was one.
func joinContinuations(src string) (string, bool) {
	if !strings.Contains(src, "\\\n") {
		return src, false
	}
	out := make([]byte, 0, len(src))
	found := false
	run := 0 // backslashes just before i
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == '\n' && run%2 == 1 {
			out = out[:len(out)-1]
			found = true
			run = 0
			continue
		}
		if c == '\\' {
			run++
		} else {
			run = 0
		}
		out = append(out, c)
	}
	return string(out), found
}

// maxScriptBytes bounds the size of a command line (and of each command
// string in it) that is parsed: at 256 KiB every nesting construct of the
// parser was seen to stay far inside the stack limit; 128 KiB keeps a
// margin while allowing far longer commands than anyone types.
const maxScriptBytes = 128 << 10

// maxTreeDepth bounds the depth of the syntax tree analysed. Words are
// rendered for each simple command, so n nested substitutions cost n^2:
// 3 000 levels of $( took most of a second and 30 000 would take a minute.
// Each level of nesting is a handful of tree levels; 1 000 allows about 200
// levels, far beyond anything written by hand.
const maxTreeDepth = 1000

// treeDepth returns the depth of the syntax tree under n, or a number over
// maxTreeDepth when it is deeper. It does not descend past maxTreeDepth:
// syntax.Walk recurses once per level, and a tree a few hundred thousand
// levels deep (600 KB of "$(") overflows the goroutine's stack, which
// crashes the whole program.
func treeDepth(n syntax.Node) int {
	depth, deepest := 0, 0
	syntax.Walk(n, func(n syntax.Node) bool {
		if n == nil {
			depth--
			return true
		}
		depth++
		deepest = max(deepest, depth)
		return depth <= maxTreeDepth
	})
	return deepest
}

func (a *analyzer) walk(f *syntax.File, depth int, src string) {
	syntax.Walk(f, func(n syntax.Node) bool {
		a.node(n, depth)
		if ac, ok := n.(*syntax.ArithmCmd); ok {
			a.arithCmdAsSubshells(ac, depth, src)
		}
		return true
	})
}

// dashScript analyses src, a command string run by sh, which is dash on
// Debian and Ubuntu. Where it holds $'...' or $"...", dash reads a $
// followed by a quoted string, so quotes end elsewhere than in bash:
// $'a\'; rm x; #' is one word to bash and runs rm under dash. Where it
// holds [[, dash runs [[ as a command: [[ a || rm ]] runs rm there. That
// reading is analysed too, with the parser's POSIX mode; a string that does
// not parse that way is unresolved, as dash runs the lines before the error.
func (a *analyzer) dashScript(src string, depth int, what string) {
	a.script(src, syntax.LangBash, depth, what)
	if a.res.Unresolved != "" || !strings.Contains(src, "$'") && !strings.Contains(src, "$\"") && !strings.Contains(src, "[[") {
		return // refused anyway, or read alike
	}
	var stmts []*syntax.Stmt
	err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Stmts(strings.NewReader(src), func(s *syntax.Stmt) bool {
		stmts = append(stmts, s)
		return true
	})
	if err != nil {
		a.unresolved("%s holds $'...' or $\"...\", which sh (dash) reads unlike bash, and it does not parse as POSIX sh (%v); use bash -c", what, err)
		return
	}
	f := &syntax.File{Stmts: stmts}
	if treeDepth(f) > maxTreeDepth {
		a.unresolved("%s nests constructs more than %d syntax levels deep; split it into simpler commands", what, maxTreeDepth)
		return
	}
	outer := a.dedup
	a.dedup = true
	a.walk(f, depth, src)
	a.dedup = outer
}

// dashBackground handles cmd &>file args, which dash (without &>) reads as
// cmd &, then >file args: the words after the redirection are a command of
// their own there. The Bash tool may fall back to sh, and sh may be dash.
func (a *analyzer) dashBackground(st *syntax.Stmt, depth int) {
	for _, r := range st.Redirs {
		if r.Op != syntax.RdrAll && r.Op != syntax.AppAll || r.Word == nil || st.Cmd == nil {
			continue
		}
		end := r.Word.End().Offset()
		if st.Cmd.End().Offset() <= end {
			continue // nothing follows the redirection
		}
		call, ok := st.Cmd.(*syntax.CallExpr)
		if !ok {
			// declare x &>f rm y, let x &>f rm y
			a.unresolved("words after %s run as a command under sh (dash), which reads &> as & and >; put the redirection last", printNode(r))
			return
		}
		var tail []*syntax.Word
		for _, w := range call.Args {
			if w.Pos().Offset() >= end {
				tail = append(tail, w)
			}
		}
		// Leading NAME=value words are assignments there.
		for len(tail) > 0 {
			if f := wordField(tail[0]); f.dynamic || !envName.MatchString(f.text) {
				break
			}
			tail = tail[1:]
		}
		if len(tail) == 0 {
			continue
		}
		outer := a.dedup
		a.dedup = true
		for _, argv := range wordFields(tail, &a.braceBudget) {
			a.argv(argv, &callCtx{depth: depth})
		}
		a.dedup = outer
	}
}

// arithCmdAsSubshells handles ((...)) read by a POSIX sh such as dash, where
// it is two nested subshells: ((rm -rf ~)) runs rm there. The Bash tool may
// fall back to sh, and sh -c may be dash, so what that reading runs is added
// (commands the bash reading already listed are not repeated).
func (a *analyzer) arithCmdAsSubshells(ac *syntax.ArithmCmd, depth int, src string) {
	start, end := int(ac.Left.Offset()), int(ac.Right.Offset())+2
	if start < 0 || end > len(src) || start >= end {
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(src[start:end]), "")
	if err != nil {
		return // dash fails on it too
	}
	outer := a.dedup
	a.dedup = true
	a.walk(f, depth, src[start:end])
	a.dedup = outer
}

// node analyses one syntax node; syntax.Walk visits the nodes inside it.
func (a *analyzer) node(n syntax.Node, depth int) {
	switch n := n.(type) {
	case *syntax.Stmt:
		if call, ok := n.Cmd.(*syntax.CallExpr); ok {
			for _, as := range call.Assigns {
				a.vars.assign(a, as, "")
			}
			if len(call.Args) > 0 {
				ctx := &callCtx{depth: depth, stdin: stdinOf(n.Redirs)}
				for _, argv := range wordFields(call.Args, &a.braceBudget) {
					c := *ctx
					a.argv(argv, &c)
				}
			}
		}
		if len(n.Redirs) > 0 {
			a.dashBackground(n, depth)
		}
	case *syntax.DeclClause:
		a.decl(n)
	case *syntax.Redirect:
		a.redirect(n)
	case *syntax.ForClause:
		a.vars.forClause(a, n)
	case *syntax.ArithmExp:
		a.vars.arith(a, n.X)
	case *syntax.ArithmCmd:
		a.vars.arith(a, n.X)
	case *syntax.LetClause:
		for _, x := range n.Exprs {
			a.vars.arith(a, x)
		}
	case *syntax.ParamExp:
		a.vars.paramExp(a, n)
	case *syntax.ArrayElem:
		if n.Index != nil {
			a.vars.arith(a, n.Index)
		}
	case *syntax.TestClause:
		a.vars.test(a, n.X)
	case *syntax.DblQuoted:
		if n.Dollar {
			// bash looks $"..." up in the message catalog named by
			// TEXTDOMAIN and TEXTDOMAINDIR (a file the line may write)
			// and expands the translation: "$(rm x)" there runs.
			a.unresolved("$\"...\" is translated through a message catalog and the translation is expanded, running command substitutions in it; use \"...\"")
		}
		for _, q := range n.Parts {
			a.quotedParamExp(q)
		}
	case *syntax.ExtGlob:
		// The parser keeps an extended glob's pattern as raw text, but bash
		// expands it like the rest of the word: @($(rm x)) runs rm, in
		// [[ == ]] always and elsewhere under shopt -s extglob.
		if n.Pattern != nil && strings.ContainsAny(n.Pattern.Value, "$`<>") {
			a.unresolved("the extended glob pattern %s holds an expansion, which bash runs; write the pattern literally", printNode(n))
		}
	case *syntax.CoprocClause:
		if n.Name != nil {
			if name, ok := staticText(n.Name); ok {
				a.vars.arrays[name] = true // NAME[0] and NAME[1] hold the descriptors
			}
		}
	case *syntax.FuncDecl:
		// The body is walked like any other code; a call of the function
		// by name is listed under that name.
	}
}

// decl handles declare, typeset, local, export, readonly and nameref.
func (a *analyzer) decl(d *syntax.DeclClause) {
	fields := []field{{text: d.Variant.Value}}
	variant := d.Variant.Value
	arrayOpt := false // -a or -A given before an operand
	for _, as := range d.Args {
		switch {
		case as.Naked && as.Name == nil && as.Value != nil:
			f := wordField(as.Value)
			fields = append(fields, f)
			a.vars.declOperand(a, variant, f)
			if !f.dynamic && strings.HasPrefix(f.text, "-") && strings.ContainsAny(f.text, "aA") {
				arrayOpt = true
			}
		default:
			fields = append(fields, assignField(as))
			a.vars.assign(a, as, variant)
			a.vars.declValue(a, variant, as, arrayOpt)
		}
	}
	a.addCommand(fields)
}

// assignField renders an assignment as the argument the builtin receives.
func assignField(as *syntax.Assign) field {
	var b strings.Builder
	f := field{}
	if as.Name != nil {
		b.WriteString(as.Name.Value)
	}
	if as.Index != nil {
		b.WriteString("[" + printNode(as.Index) + "]")
		f.dynamic = true
	}
	if !as.Naked || as.Value != nil || as.Array != nil {
		if as.Append {
			b.WriteString("+")
		}
		b.WriteString("=")
	}
	switch {
	case as.Array != nil:
		b.WriteString(printNode(as.Array))
		f.dynamic = true
	case as.Value != nil:
		v := wordField(as.Value)
		b.WriteString(v.text)
		f.dynamic = f.dynamic || v.dynamic
	}
	f.text = b.String()
	return f
}

// quotedParamExp checks a part of a double-quoted word or of an unquoted
// here-document. There, in ${x:-word} (and :=, :+, :?, with or without the
// colon) a single quote is an ordinary character and what it encloses is
// expanded: "${x:-'$(rm x)'}" runs rm, though the parser reads a quoted
// string. bash does honour the quotes in ${x/pattern/...}, ${x#...} and
// ${x%...}.
func (a *analyzer) quotedParamExp(part syntax.WordPart) {
	pe, ok := part.(*syntax.ParamExp)
	if !ok || pe.Exp == nil || pe.Exp.Word == nil {
		return
	}
	switch pe.Exp.Op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull,
		syntax.AlternateUnset, syntax.AlternateUnsetOrNull, syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
	default:
		return
	}
	for _, q := range pe.Exp.Word.Parts {
		if sq, ok := q.(*syntax.SglQuoted); ok && (sq.Dollar || strings.ContainsAny(sq.Value, "$`")) {
			a.unresolved("in %s within double quotes or a here-document, the single quotes do not quote and bash expands %s; use double quotes or escape the $", printNode(pe), printNode(sq))
			return
		}
		a.quotedParamExp(q) // "${x:-${y:-'...'}}"
	}
}

// redirect records write targets.
func (a *analyzer) redirect(r *syntax.Redirect) {
	if a.dedup {
		return // the bash reading listed the same redirections
	}
	if r.Hdoc != nil && (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc) {
		for _, q := range r.Hdoc.Parts {
			a.quotedParamExp(q)
		}
	}
	if r.N != nil && strings.HasPrefix(r.N.Value, "{") {
		// {var}> stores the descriptor in var; a subscript there is
		// arithmetic, where a variable's text can run commands.
		a.vars.nameOperand(a, "the descriptor variable", strings.Trim(r.N.Value, "{}"))
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.RdrClob, syntax.AppClob,
		syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
	case syntax.DplOut:
		// >&2 and >&- duplicate or close a descriptor; >&file writes.
		f := wordField(r.Word)
		if !f.dynamic && (f.text == "-" || isFD(strings.TrimSuffix(f.text, "-"))) {
			return
		}
	default:
		return
	}
	if r.Word == nil {
		return
	}
	f := wordField(r.Word)
	a.res.Writes = append(a.res.Writes, f.text)
	a.res.writeDynamic = append(a.res.writeDynamic, f.dynamic)
	if f.dynamic && a.res.WriteUnresolved == "" {
		a.res.WriteUnresolved = fmt.Sprintf("the redirection target %s is computed at run time; write the path literally", f.text)
	}
}

func isFD(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// stdinKind says where a command's standard input comes from.
type stdinKind int

const (
	stdinUnknown stdinKind = iota // inherited, a pipe, or a descriptor
	stdinFile                     // < file
	stdinText                     // a here-document or here-string known statically
)

type stdin struct {
	kind stdinKind
	text string // the text for stdinText, the file name for stdinFile
}

// stdinOf finds the last redirection of descriptor 0 in redirs.
func stdinOf(redirs []*syntax.Redirect) stdin {
	in := stdin{}
	for _, r := range redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.RdrIn, syntax.RdrInOut:
			// A file named literally is like a script file; a process
			// substitution or a computed name is not known.
			in = stdin{}
			if name, ok := staticText(r.Word); ok {
				in = stdin{kind: stdinFile, text: name}
			}
		case syntax.DplIn:
			in = stdin{}
		case syntax.Hdoc, syntax.DashHdoc:
			in = stdin{}
			if s, ok := heredocText(r); ok {
				in = stdin{kind: stdinText, text: s}
			}
		case syntax.WordHdoc:
			in = stdin{}
			if s, ok := staticText(r.Word); ok {
				in = stdin{kind: stdinText, text: s + "\n"}
			}
		}
	}
	return in
}

// heredocText returns the body of a here-document as the shell reads it,
// when it holds no expansion. With a quoted delimiter (<<'EOF', <<\EOF) the
// body is literal; otherwise a backslash quotes only $ ` \ and newline. With
// <<- leading tabs are removed from every line.
func heredocText(r *syntax.Redirect) (string, bool) {
	if r.Hdoc == nil {
		return "", true
	}
	quoted := false
	if r.Word != nil {
		for _, p := range r.Word.Parts {
			if lit, ok := p.(*syntax.Lit); !ok || strings.Contains(lit.Value, "\\") {
				quoted = true
			}
		}
	}
	var b strings.Builder
	for _, p := range r.Hdoc.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok {
			return "", false
		}
		b.WriteString(lit.Value)
	}
	raw := b.String()
	if r.Op == syntax.DashHdoc {
		lines := strings.Split(raw, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimLeft(l, "\t")
		}
		raw = strings.Join(lines, "\n")
	}
	if quoted {
		return raw, true
	}
	b.Reset()
	for i := 0; i < len(raw); i++ {
		if raw[i] == '\\' && i+1 < len(raw) && strings.IndexByte("$`\\\n", raw[i+1]) >= 0 {
			i++
			if raw[i] != '\n' {
				b.WriteByte(raw[i])
			}
			continue
		}
		b.WriteByte(raw[i])
	}
	return b.String(), true
}

// callCtx is the context of one argument vector being unwrapped.
type callCtx struct {
	depth int
	stdin stdin
	// openEnded reports that more arguments are appended at run time
	// (xargs): a wrapper whose program or options are missing gets them
	// from input.
	openEnded bool
	// via names the wrapper that supplied the vector, for messages.
	via string
}

// maxWrappers bounds how many wrappers one vector may nest; each one
// consumes at least its own name, so this only guards pathological input.
const maxWrappers = 64

// argv analyses one argument vector, looking through wrappers.
func (a *analyzer) argv(fields []field, ctx *callCtx) {
	for range maxWrappers {
		if len(fields) == 0 {
			return
		}
		name := fields[0]
		if name.dynamic {
			what := "the program name " + name.text
			if ctx.via != "" {
				what = "the program that " + ctx.via + " runs (" + name.text + ")"
			}
			a.unresolved("%s is computed at run time; name the program literally", what)
			return
		}
		a.checkProgramPath(name.text)
		if strings.EqualFold(path.Base(name.text), "git") {
			fields = a.gitFields(fields)
		}
		a.addCommand(fields)
		next := a.unwrap(path.Base(name.text), fields[1:], ctx)
		if next == nil {
			return
		}
		ctx.via = path.Base(name.text)
		fields = next
	}
	a.unresolved("the command nests more than %d wrappers", maxWrappers)
}
