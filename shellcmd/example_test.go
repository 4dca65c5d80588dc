package shellcmd_test

import (
	"fmt"

	"github.com/paigasus/helikon/shellcmd"
)

func ExampleAnalyze() {
	a := shellcmd.Analyze(`sudo -u build env CI=1 bash -c 'make && r\m -rf out' > log.txt`)
	for _, c := range a.Commands {
		fmt.Printf("%s: %q\n", c.Program(), c.Args)
	}
	fmt.Println("writes:", a.Writes)

	b := shellcmd.Analyze(`cmd=rm; $cmd -rf /`)
	fmt.Println("unresolved:", b.Unresolved)
	// Output:
	// sudo: ["sudo" "-u" "build" "env" "CI=1" "bash" "-c" "make && r\\m -rf out"]
	// env: ["env" "CI=1" "bash" "-c" "make && r\\m -rf out"]
	// bash: ["bash" "-c" "make && r\\m -rf out"]
	// make: ["make"]
	// rm: ["rm" "-rf" "out"]
	// writes: [log.txt]
	// unresolved: the program name $cmd is computed at run time; name the program literally
}

func ExampleFilter_Check() {
	p := shellcmd.Filter{
		Allow: []string{"ls", "grep", "git status", "git diff"},
		Deny:  []string{"rm"},
	}
	for _, cmd := range []string{
		"ls -la | grep go",
		"git push",
		"/bin/rm -rf /",
		"eval ls",
	} {
		fmt.Printf("%s => %v\n", cmd, p.Check(cmd))
	}
	// Output:
	// ls -la | grep go => <nil>
	// git push => denied: the command runs "git push", which is not on the allow list (ls, grep, git status, git diff); use only allowed programs
	// /bin/rm -rf / => denied: the command runs "/bin/rm -rf /", which the deny list forbids (pattern "rm"); do not run rm
	// eval ls => denied: a command allow list is in force and eval runs a string as commands, which cannot be checked before it runs; write the command directly
}
