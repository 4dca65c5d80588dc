package shellcmd

import (
	"path"
	"regexp"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Bash evaluates array subscripts inside arithmetic, and a subscript may hold
// a command substitution: with x='a[$(rm -rf ~)]', $((x)), ((x)), [[ x -eq 0 ]],
// ${s:x} and read 'a[$(...)]' all run rm. The text that does so can come from
// anywhere at run time (a file, a command's output, a concatenation), so the
// rule is about data flow, not about the text: a variable may be used in
// arithmetic only when every assignment of it in the whole command line
// stores a number. Variables that are never assigned come from the
// environment and are refused, as are positional parameters.

var (
	identRe    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	nameOpRe   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\[[0-9]*\])?$`)
	numberRe   = regexp.MustCompile(`^[+-]?([0-9]+|0[xX][0-9a-fA-F]+|[0-9]+#[0-9a-zA-Z@_]+)$`)
	braceSeqRe = regexp.MustCompile(`^\{[+-]?[0-9]+\.\.[+-]?[0-9]+(\.\.[+-]?[0-9]+)?\}$`)
)

// numericSpecial are parameters bash keeps numeric.
var numericSpecial = map[string]bool{
	"#": true, "?": true, "$": true, "!": true, "RANDOM": true, "SRANDOM": true, "LINENO": true,
	"SECONDS": true, "BASHPID": true, "PPID": true, "UID": true, "EUID": true, "OPTIND": true,
	"EPOCHSECONDS": true,
}

// codeVars are variables whose value the shell runs as code or expands as a
// prompt (PS4 under set -x performs command substitution).
var codeVars = map[string]bool{
	"PS0": true, "PS1": true, "PS2": true, "PS3": true, "PS4": true, "PROMPT_COMMAND": true,
}

// intVars are the variables bash itself gives the integer attribute: what
// is assigned to them is evaluated as arithmetic, so OPTIND='a[$(rm x)]'
// runs rm.
var intVars = map[string]bool{
	"OPTIND": true, "RANDOM": true, "SRANDOM": true, "HISTCMD": true, "BASHPID": true,
	"EUID": true, "UID": true, "PPID": true,
}

// isBourneShell reports whether text names a shell whose -c string this
// package parses with bash syntax.
func isBourneShell(text string) bool {
	lang, ok := shells[path.Base(text)]
	return ok && lang == syntax.LangBash && !strings.ContainsAny(text, "$`")
}

// tableVars are bash's command hash table and alias table: an entry such as
// BASH_CMDS[ls]=/bin/rm makes a name run another program, like hash -p.
var tableVars = map[string]bool{"BASH_CMDS": true, "BASH_ALIASES": true}

// startupVars name a file of commands a shell reads when it starts: bash -c
// reads BASH_ENV, an interactive sh reads ENV. The shell first expands the
// value with parameter expansion and command substitution, so
// BASH_ENV='$(rm x)' runs rm, and a value computed at run time may name a
// file the line wrote or a process substitution. Only a plain file name is
// accepted; its contents are not read, like a script's.
var startupVars = map[string]bool{"BASH_ENV": true, "ENV": true}

// plainFileName reports whether text, the static value assigned to a
// start-up variable, expands to itself.
func plainFileName(text string) bool { return !strings.ContainsAny(text, "$`") }

type varFlow struct {
	numeric map[string]bool // name -> every assignment seen stores a number
	inited  map[string]bool // name -> some assignment does not read the old value
	uses    map[string]bool // names read by arithmetic
	// arrays holds the names the line makes arrays; declDynamic the names
	// declare, typeset, local or readonly assign a value computed at run
	// time (see declValue).
	arrays      map[string]bool
	declDynamic []string
	// pathChecked is set while an assignment to PATH whose value
	// searchPath has checked is recorded.
	pathChecked bool
}

func newVarFlow() *varFlow {
	return &varFlow{numeric: map[string]bool{}, inited: map[string]bool{}, uses: map[string]bool{}, arrays: map[string]bool{}}
}

// builtinArrays are the arrays bash itself provides.
var builtinArrays = map[string]bool{
	"BASH_ALIASES": true, "BASH_ARGC": true, "BASH_ARGV": true, "BASH_CMDS": true, "BASH_LINENO": true,
	"BASH_REMATCH": true, "BASH_SOURCE": true, "BASH_VERSINFO": true, "COMP_WORDS": true, "COPROC": true,
	"DIRSTACK": true, "FUNCNAME": true, "GROUPS": true, "MAPFILE": true, "PIPESTATUS": true,
}

// compoundRisk reports whether text, a value declare may read as a compound
// array assignment "(...)", would expand something there: a substitution,
// a parameter, or a subscript (arithmetic).
func compoundRisk(text string) bool {
	return strings.HasPrefix(text, "(") && strings.ContainsAny(text, "$`[<>")
}

// declValue checks the value declare, typeset, local or readonly assigns:
// when the variable is an array (-a, -A, or made one anywhere in the line),
// a value that is "(...)" after expansion is parsed again as a compound
// assignment and expanded, so declare -a a='($(rm x))' and
// x='($(rm x))'; declare -a a=$x run rm.
func (v *varFlow) declValue(a *analyzer, variant string, as *syntax.Assign, arrayOpt bool) {
	if as.Name == nil {
		return
	}
	name := as.Name.Value
	if arrayOpt {
		v.arrays[name] = true
	}
	if as.Value == nil || variant == "export" {
		return
	}
	f := wordField(as.Value)
	switch {
	case !f.dynamic && compoundRisk(f.text):
		a.unresolved("%s %s=%s: declare reads a value (...) as a list of words for an array and expands it; assign the array with %s=(...) unquoted", variant, name, f.text, name)
	case f.dynamic && arrayOpt:
		a.unresolved("%s %s=%s: for an array declare reads a value that expands to (...) as a list of words and expands it again; assign the array with %s=(...)", variant, name, f.text, name)
	case f.dynamic:
		v.declDynamic = append(v.declDynamic, name)
	}
}

// set records an assignment that does not depend on the old value and whose
// text is not known (a number when numeric).
func (v *varFlow) set(a *analyzer, name string, numeric bool) {
	v.record(a, name, numeric, numeric, false, "")
	v.inited[name] = true
}

// setPlain is set for an assignment whose value is known to be plain text
// that expands to itself (see [startupVars]): text.
func (v *varFlow) setPlain(a *analyzer, name string, numeric bool, text string) {
	v.record(a, name, numeric, true, true, text)
	v.inited[name] = true
}

// update records an assignment that reads the old value first (x++, x+=1),
// which makes the old value a use too.
func (v *varFlow) update(a *analyzer, name string, numeric bool) {
	v.record(a, name, numeric, numeric, false, "")
}

// record records an assignment of name; plain reports that the value is
// static text without expansions (or a number), known that it is text.
func (v *varFlow) record(a *analyzer, name string, numeric, plain, known bool, text string) {
	if intVars[name] && !numeric {
		a.unresolved("assigning %s evaluates the value as arithmetic (bash gives it the integer attribute), which can run commands hidden in an array subscript; assign it a literal number", name)
	}
	if name == "SHELLOPTS" {
		a.unresolved("SHELLOPTS turns on options, such as history expansion, in the shells the line starts; set the options with set -o in the command instead")
	}
	if name == "SHELL" && !(plain && isBourneShell(text)) {
		a.unresolved("SHELL picks the interpreter that sudo -s, su -m and flock -c give their command to; leave it unset or set it to a plain path of sh or bash")
	}
	if codeVars[name] {
		a.unresolved("assigning %s makes the shell run its value as commands; do not set it", name)
	}
	if tableVars[name] {
		a.unresolved("assigning %s makes a command name run another program; call the program directly", name)
	}
	if startupVars[name] && (!known || isStdinFile(text) || isFDFile(text)) {
		a.unresolved("%s names a file of commands that a shell expands (running command substitutions) and reads when it starts; this value is computed at run time, holds $ or `, or names the input or a descriptor: set it to a plain file name, or unset it", name)
	} else if startupVars[name] && text != "" {
		if r := a.pathRisk(text, "the start-up file "+name, true); r != "" {
			a.unresolved("%s; set it to a plain file name, or unset it", r)
		}
	}
	if gitConfigVar(name) {
		a.git.config = name
	}
	if name == "CDPATH" {
		a.cwdChanged("CDPATH is set, so cd may change into a directory it lists")
	}
	if name == "PATH" && !v.pathChecked {
		if known {
			a.searchPath(text, false)
		} else {
			a.unresolved("PATH is set to a value computed at run time, which decides the program a name runs; write the directories literally")
		}
	}
	if reason := localeRisk(name, known, text); reason != "" {
		a.unresolved("%s", reason)
	}
	if old, ok := v.numeric[name]; ok {
		numeric = numeric && old
	}
	v.numeric[name] = numeric
}

// envAssign records a NAME=value word given to env or sudo, which only the
// child sees; a later arithmetic use in a child shell reads it. f is the
// whole word, which must start with a static NAME= (see envName).
func (v *varFlow) envAssign(a *analyzer, f field) {
	name, val, _ := strings.Cut(f.text, "=")
	if name == "PATH" {
		a.searchPath(val, f.dynamic)
		v.pathChecked = true
		defer func() { v.pathChecked = false }()
	}
	if !f.dynamic && plainFileName(val) {
		v.setPlain(a, name, false, val)
		return
	}
	v.set(a, name, false)
}

// assign records a shell assignment.
func (v *varFlow) assign(a *analyzer, as *syntax.Assign, variant string) {
	if as.Index != nil {
		v.arith(a, as.Index)
	}
	if as.Name == nil {
		return
	}
	if as.Array != nil || as.Index != nil {
		v.arrays[as.Name.Value] = true
	}
	numeric := true
	switch {
	case as.Array != nil:
		for _, e := range as.Array.Elems {
			if e.Value != nil && !numericWord(e.Value) {
				numeric = false
			}
		}
	case as.Value != nil:
		if as.Name.Value == "PATH" && as.Index == nil {
			f := wordField(as.Value)
			a.searchPath(f.text, f.dynamic)
			v.pathChecked = true
			defer func() { v.pathChecked = false }()
		}
		numeric = numericWord(as.Value) && !as.Append
		if text, ok := staticText(as.Value); ok && !as.Append && as.Index == nil && plainFileName(text) {
			v.setPlain(a, as.Name.Value, numeric, text)
			return
		}
	case as.Naked:
		// local x creates an empty variable; declare x and export x keep
		// whatever value x has, maybe from the environment.
		if variant != "local" {
			return
		}
		v.setPlain(a, as.Name.Value, numeric, "")
		return
	}
	v.set(a, as.Name.Value, numeric)
}

// numericWord reports whether w always expands to a number.
func numericWord(w *syntax.Word) bool {
	if len(w.Parts) == 1 {
		switch p := w.Parts[0].(type) {
		case *syntax.ArithmExp:
			return true
		case *syntax.ParamExp:
			return p.Length && p.Exp == nil || p.Param != nil && numericSpecial[p.Param.Value] && p.Exp == nil && p.Repl == nil && p.Slice == nil
		case *syntax.DblQuoted:
			return len(p.Parts) == 1 && numericWord(&syntax.Word{Parts: p.Parts})
		}
	}
	s, ok := staticText(w)
	return ok && (s == "" || numberRe.MatchString(s))
}

func (v *varFlow) forClause(a *analyzer, f *syntax.ForClause) {
	switch l := f.Loop.(type) {
	case *syntax.WordIter:
		numeric := l.InPos.IsValid()
		for _, w := range l.Items {
			if !numericWord(w) && !braceSeqRe.MatchString(printNode(w)) {
				numeric = false
			}
		}
		v.set(a, l.Name.Value, numeric)
	case *syntax.CStyleLoop:
		for _, x := range []syntax.ArithmExpr{l.Init, l.Cond, l.Post} {
			if x != nil {
				v.arith(a, x)
			}
		}
	}
}

// arith records the variables an arithmetic expression reads.
func (v *varFlow) arith(a *analyzer, x syntax.ArithmExpr) {
	switch x := x.(type) {
	case *syntax.BinaryArithm:
		if x.Op == syntax.Assgn {
			if name, ok := arithName(x.X); ok {
				v.set(a, name, true)
				v.arith(a, x.Y)
				return
			}
		}
		if isAssignOp(x.Op) {
			if name, ok := arithName(x.X); ok {
				v.update(a, name, true)
			}
		}
		v.arith(a, x.X)
		v.arith(a, x.Y)
	case *syntax.UnaryArithm:
		if name, ok := arithName(x.X); ok && (x.Op == syntax.Inc || x.Op == syntax.Dec) {
			v.update(a, name, true)
		}
		v.arith(a, x.X)
	case *syntax.ParenArithm:
		v.arith(a, x.X)
	case *syntax.FlagsArithm:
		v.arith(a, x.X)
	case *syntax.Word:
		v.arithWord(a, x)
	}
}

func isAssignOp(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
		syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn:
		return true
	}
	return false
}

// arithName returns the variable an arithmetic operand names.
func arithName(x syntax.ArithmExpr) (string, bool) {
	w, ok := x.(*syntax.Word)
	if !ok || len(w.Parts) != 1 {
		return "", false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		return p.Value, identRe.MatchString(p.Value)
	case *syntax.ParamExp:
		if p.Param != nil && p.Index == nil && p.Exp == nil && !p.Excl && !p.Length {
			return p.Param.Value, true
		}
	}
	return "", false
}

// arithWord records what an arithmetic operand word reads.
func (v *varFlow) arithWord(a *analyzer, w *syntax.Word) {
	for _, part := range w.Parts {
		v.arithPart(a, part)
	}
}

func (v *varFlow) arithPart(a *analyzer, part syntax.WordPart) {
	switch p := part.(type) {
	case *syntax.Lit:
		s := strings.TrimLeft(p.Value, "+-")
		switch {
		case s == "" || numberRe.MatchString(s):
		case identRe.MatchString(s):
			v.uses[s] = true
		default:
			v.uses[s] = true // odd text: refused below as never assigned
		}
	case *syntax.ParamExp:
		v.paramUse(a, p)
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			v.arithPart(a, q)
		}
	case *syntax.ArithmExp:
		// Numeric; its own contents are checked where Walk finds it.
	case *syntax.SglQuoted:
		// Arithmetic is expanded as if in double quotes: a single quote
		// quotes nothing there, so $(( '$(rm x)' )) runs rm; and text
		// that does is evaluated like any other.
		if p.Dollar || !numberRe.MatchString(p.Value) {
			a.unresolved("arithmetic over %s: single quotes do not quote inside arithmetic, and bash expands and evaluates the text (running command substitutions); use literal numbers", printNode(p))
		}
	default:
		a.unresolved("arithmetic over %s, computed at run time, can run commands hidden in its text (bash evaluates array subscripts); use literal numbers", printNode(part))
	}
}

// paramUse records a parameter expansion whose value arithmetic reads.
func (v *varFlow) paramUse(a *analyzer, p *syntax.ParamExp) {
	if p.Length && p.Exp == nil {
		return
	}
	if p.Param == nil || p.Excl || p.Exp != nil || p.Repl != nil || p.Slice != nil || p.Names != 0 || p.NestedParam != nil {
		a.unresolved("arithmetic over %s, computed at run time, can run commands hidden in its text (bash evaluates array subscripts); use literal numbers", printNode(p))
		return
	}
	v.uses[p.Param.Value] = true
}

// paramExp checks a parameter expansion anywhere: its subscript and slice
// are arithmetic, ${x@P} expands x as a prompt (running command
// substitutions in it), ${!x} reads the variable x names (and evaluates a
// subscript in that name), and zsh's (e) flag evaluates the value.
func (v *varFlow) paramExp(a *analyzer, p *syntax.ParamExp) {
	if p.Index != nil {
		if w, ok := p.Index.(*syntax.Word); !ok || !isAtStar(w) {
			v.arith(a, p.Index)
		}
	}
	if p.Slice != nil {
		if p.Slice.Offset != nil {
			v.arith(a, p.Slice.Offset)
		}
		if p.Slice.Length != nil {
			v.arith(a, p.Slice.Length)
		}
	}
	if p.Exp != nil && p.Exp.Op == syntax.OtherParamOps && p.Exp.Word != nil {
		if s, _ := staticText(p.Exp.Word); strings.Contains(s, "P") {
			a.unresolved("${%s@P} runs command substitutions found in the value; do not use @P", paramName(p))
		}
	}
	if p.Excl && p.Names == 0 && p.Index == nil && p.Param != nil {
		v.uses[p.Param.Value] = true
	}
	if p.Flags != nil && strings.ContainsAny(p.Flags.Value, "e") {
		a.unresolved("the zsh (e) flag evaluates a value as code; do not use it")
	}
}

func paramName(p *syntax.ParamExp) string {
	if p.Param == nil {
		return "?"
	}
	return p.Param.Value
}

func isAtStar(w *syntax.Word) bool {
	if len(w.Parts) != 1 {
		return false
	}
	lit, ok := w.Parts[0].(*syntax.Lit)
	return ok && (lit.Value == "@" || lit.Value == "*")
}

// test checks [[ ]]: the operands of -eq and friends are arithmetic and -v
// evaluates a subscript in its operand.
func (v *varFlow) test(a *analyzer, x syntax.TestExpr) {
	switch x := x.(type) {
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, o := range []syntax.TestExpr{x.X, x.Y} {
				if w, ok := o.(*syntax.Word); ok {
					v.arithWord(a, w)
				}
			}
			return
		}
		v.test(a, x.X)
		v.test(a, x.Y)
	case *syntax.UnaryTest:
		if x.Op == syntax.TsVarSet {
			if w, ok := x.X.(*syntax.Word); ok {
				s, static := staticText(w)
				if !static || !nameOpRe.MatchString(s) {
					a.unresolved("[[ -v %s ]] evaluates a subscript in a name computed at run time; write the name literally", printNode(w))
				}
			}
			return
		}
		v.test(a, x.X)
	case *syntax.ParenTest:
		v.test(a, x.X)
	}
}

// nameOperand checks a variable name given to a builtin as a word: a
// subscript in it is evaluated as arithmetic.
func (v *varFlow) nameOperand(a *analyzer, prog, name string) {
	if !nameOpRe.MatchString(name) {
		a.unresolved("%s %s: a variable name with a computed subscript can run commands; write a plain name", prog, name)
		return
	}
	base, _, sub := strings.Cut(name, "[")
	if sub {
		v.arrays[base] = true
	}
	v.set(a, base, false)
}

// builtin checks the name operands of builtins that assign or test
// variables by name.
func (v *varFlow) builtin(a *analyzer, prog string, args []field) {
	names := func(fs []field) {
		for _, f := range fs {
			if f.dynamic {
				a.unresolved("%s %s: a variable name computed at run time can run commands hidden in a subscript; write the name literally", prog, f.text)
				return
			}
			v.nameOperand(a, prog, f.text)
		}
	}
	switch prog {
	case "read":
		opts, rest, err := optSpec{short: "ersa:d:i:n:N:p:t:u:"}.parse(prog, args)
		if err != nil {
			a.unresolved("%v", err)
			return
		}
		if arr, ok := value(opts, "a"); ok {
			names([]field{{text: arr}})
			v.arrays[arr] = true
		}
		names(rest)
	case "mapfile", "readarray":
		opts, rest, err := optSpec{short: "tC:c:d:n:O:s:u:"}.parse(prog, args)
		if err != nil {
			a.unresolved("%v", err)
			return
		}
		if has(opts, "C") {
			a.unresolved("%s -C runs a command string for each line; use a loop", prog)
		}
		names(rest)
		for _, f := range rest {
			v.arrays[f.text] = true
		}
	case "printf":
		if len(args) >= 2 && !args[0].dynamic && args[0].text == "-v" {
			names(args[1:2])
		} else if len(args) > 0 && !args[0].dynamic && strings.HasPrefix(args[0].text, "-v") {
			names([]field{{text: args[0].text[2:]}})
		} else if len(args) > 0 && args[0].dynamic {
			a.unresolved("printf %s: a first argument computed at run time may be -v with a name that runs commands", args[0].text)
		}
	case "unset":
		var rest []field
		for i, f := range args {
			if f.dynamic || !strings.HasPrefix(f.text, "-") {
				rest = args[i:]
				break
			}
		}
		names(rest)
	case "getopts":
		if len(args) >= 2 {
			names(args[1:2])
		}
	case "wait":
		for i, f := range args {
			if !f.dynamic && f.text == "-p" && i+1 < len(args) {
				names(args[i+1 : i+2])
			}
		}
	case "test", "[":
		for i, f := range args {
			if !f.dynamic && f.text == "-v" && i+1 < len(args) {
				n := args[i+1]
				if n.dynamic || !nameOpRe.MatchString(n.text) {
					a.unresolved("%s -v %s evaluates a subscript in a name computed at run time; write the name literally", prog, n.text)
				}
			}
		}
	case "declare", "typeset", "local", "export", "readonly":
		// Reached only when quoted ('declare' x), so not a DeclClause.
		for _, f := range args {
			v.declOperand(a, prog, f)
		}
	}
}

// declOperand checks a word operand of declare, typeset, local, export or
// readonly that the parser did not take for an assignment (an option, or a
// quoted "name=value", which assigns at run time).
func (v *varFlow) declOperand(a *analyzer, variant string, f field) {
	if f.dynamic {
		a.unresolved("%s %s: a name computed at run time can run commands hidden in an array subscript; write the name literally", variant, f.text)
		return
	}
	if strings.HasPrefix(f.text, "-") || strings.HasPrefix(f.text, "+") {
		if variant != "export" && variant != "readonly" && strings.ContainsAny(f.text[1:], "in") {
			a.unresolved("%s %s: integer and nameref variables evaluate assigned text as code; use plain variables", variant, f.text)
		}
		return
	}
	name, val, _ := strings.Cut(f.text, "=")
	if variant != "export" && compoundRisk(val) {
		a.unresolved("%s %s: declare reads a value (...) as a list of words for an array and expands it; assign the array with %s=(...) unquoted", variant, f.text, name)
		return
	}
	v.nameOperand(a, variant, name)
}

// finish refuses arithmetic reads of variables not known to be numbers,
// and values computed at run time that declare assigns to arrays.
func (v *varFlow) finish(a *analyzer) {
	for _, n := range v.declDynamic {
		if v.arrays[n] || builtinArrays[n] {
			a.unresolved("declare %s=...: %s is an array, and declare reads a value that expands to (...) as a list of words and expands it again; assign the array with %s=(...)", n, n, n)
		}
	}
	names := make([]string, 0, len(v.uses))
	for n := range v.uses {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if numericSpecial[n] {
			continue
		}
		numeric := v.numeric[n]
		switch {
		case !v.inited[n]:
			a.unresolved("arithmetic reads %s, which this command never sets to a number; its text could run commands through an array subscript; assign it a number first", n)
		case !numeric:
			a.unresolved("arithmetic reads %s, which this command sets to text that is not a number; that text could run commands through an array subscript; use literal numbers", n)
		}
	}
}
