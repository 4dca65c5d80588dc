package shellcmd

// interpreters run the code their arguments or their standard input hold
// (python3 x.py, python3 - < x.py, awk 'BEGIN{system("…")}'), in a
// language this package does not read: the analysis lists them under their
// own name and cannot see what they run (see the package doc).
var interpreters = map[string]bool{
	"python": true, "python2": true, "python3": true, "node": true, "nodejs": true, "deno": true, "bun": true,
	"ruby": true, "perl": true, "php": true, "lua": true, "luajit": true, "tclsh": true, "Rscript": true,
	"awk": true, "gawk": true, "mawk": true, "nawk": true,
}

// codeBuiltins are shell builtins that run code the analysis gets from
// somewhere other than their words (a file, a string, the history), or
// replace the shell with their operands.
var codeBuiltins = map[string]bool{".": true, "source": true, "eval": true, "exec": true, "fc": true, "command": true, "builtin": true}

// RunsCode reports whether program (a base name, as [Command.Program]
// returns it) runs code that its words do not spell out as one argument
// vector: a shell or another interpreter, a shell builtin that runs a file
// or a string (eval, source, exec), or a program that runs another named by
// its operands (env, sudo, timeout, xargs, nice, …: those whose command
// the analysis unwraps). A rule naming such a program with its exact
// arguments (Bash(=python3 x.py)) would still allow whatever code it runs:
// code that offers rules on a person's behalf (the "always" answer of an
// approval) offers none for them.
//
// It is a list of names, as every rule is: a copy of python under another
// name, or a script the command wrote earlier, is not recognised.
func RunsCode(program string) bool {
	if _, ok := shells[program]; ok {
		return true
	}
	return otherShells[program] || interpreters[program] || codeBuiltins[program] || unwraps(program)
}

// unwraps reports whether the analysis looks inside program's operands for
// the program it runs: asking unwrapProgram itself keeps the two from
// drifting apart. It runs on no arguments, as for a line naming the program
// alone.
func unwraps(program string) bool {
	a := &analyzer{maxDepth: DefaultMaxDepth, res: &Analysis{}, vars: newVarFlow(), listed: map[string]bool{}, braceBudget: maxBraceTotal}
	_, ok := a.unwrapProgram(program, nil, &callCtx{})
	return ok
}
