package shellcmd

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
)

// replayTouch runs cmd with the real bash in a new directory and reports
// whether it created the file pwned there; env is added to PATH and HOME.
// A case whose line does not run touch tests nothing, so it fails.
func replayTouch(t *testing.T, cmd string, env ...string) (dir string) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed: the attacks cannot be replayed")
	}
	dir = t.TempDir()
	c := exec.Command(bash, "-c", cmd)
	c.Dir = dir
	c.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}, env...)
	c.Run() // the exit status does not matter, the file does
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err != nil {
		t.Errorf("%q did not run touch under this bash, so the case tests nothing: %v", cmd, err)
	}
	return dir
}

// checkRefused fails unless the analysis of cmd lists touch or is
// unresolved, that is, unless a deny list of touch refuses it.
func checkRefused(t *testing.T, o Options, cmd string) {
	t.Helper()
	if a := o.Analyze(cmd); a.Unresolved == "" && !slices.Contains(a.Programs(), "touch") {
		t.Errorf("Analyze(%q) = %q, resolved, but bash ran touch", cmd, a.Programs())
	}
}

// TestLauncherAttacksAgainstBash runs programs that start another program
// (the wrappers of issue 12) with the real bash: each runs touch, and the
// analysis must list it.
func TestLauncherAttacksAgainstBash(t *testing.T) {
	cases := []struct{ prog, cmd string }{
		{"setpriv", "setpriv --nnp touch pwned"},
		{"setpriv", "setpriv --inh-caps -all touch pwned"},
		{"prlimit", "prlimit --nofile=1024 touch pwned"},
		{"prlimit", "prlimit -n1024 -- touch pwned"},
		{"fakeroot", "fakeroot touch pwned"},
		{"fakeroot", "fakeroot -u -- touch pwned"},
		{"/lib64/ld-linux-x86-64.so.2", "/lib64/ld-linux-x86-64.so.2 $(command -v touch) pwned"},
		{"/lib64/ld-linux-x86-64.so.2", "/lib64/ld-linux-x86-64.so.2 --inhibit-cache /usr/bin/touch pwned"},
		{"logsave", "logsave -a log touch pwned"},
		{"capsh", "capsh -- -c 'touch pwned'"},
		{"capsh", "capsh --shell=/bin/sh -- -c 'touch pwned'"},
		{"capsh", "capsh == -- -c 'touch pwned'"},
		{"ssh-agent", "ssh-agent touch pwned"},
		{"strace", "strace -f -qq -o /dev/null touch pwned"},
		{"strace", "strace -o '|touch pwned' true"},
		{"strace", "strace --output='!touch pwned' true"},
		{"dbus-run-session", "dbus-run-session -- touch pwned"},
	}
	for _, c := range cases {
		if _, err := exec.LookPath(c.prog); err != nil {
			t.Logf("%s is not installed: %q is only analysed", c.prog, c.cmd)
		} else {
			replayTouch(t, c.cmd)
		}
		checkRefused(t, Options{}, c.cmd)
	}
}

// TestLaunchersList checks what the analysis lists through each launcher,
// and what it refuses.
func TestLaunchersList(t *testing.T) {
	for _, c := range []analyzeCase{
		{cmd: "setpriv --reuid=1000 --regid 1000 --init-groups rm x", progs: "setpriv rm"},
		{cmd: "setpriv -d", progs: "setpriv"},
		{cmd: "setpriv --bogus rm", progs: "setpriv", unres: "no option --bogus"},
		{cmd: "prlimit -p 1 --nofile=10", progs: "prlimit"},
		{cmd: "prlimit --cpu=10 --as rm x", progs: "prlimit rm"},
		{cmd: "fakeroot -s state -- rm x", progs: "fakeroot rm"},
		{cmd: "fakeroot <<< 'rm x'", progs: "fakeroot rm"},
		{cmd: "fakeroot", progs: "fakeroot", unres: "standard input"},
		{cmd: "fakeroot -l ./evil.so rm", progs: "fakeroot", unres: "loads or runs code"},
		{cmd: "ld.so --library-path /lib rm x", progs: "ld.so rm"},
		{cmd: "/lib/ld-musl-x86_64.so.1 -- rm x", progs: "ld-musl-x86_64.so.1 rm"},
		{cmd: "ld-2.31.so --argv0 ls /bin/rm x", progs: "ld-2.31.so rm"},
		{cmd: "ld.so --list /bin/rm", progs: "ld.so"},
		{cmd: "ld.so --preload ./x.so /bin/ls", progs: "ld.so", unres: "load code"},
		{cmd: "logsave log - ", progs: "logsave"},
		{cmd: "logsave $log rm x", progs: "logsave", unres: "computed at run time"},
		{cmd: "capsh --print --caps=cap_chown+ep -- -c 'rm x'", progs: "capsh bash rm"},
		{cmd: "capsh --shell=/usr/bin/python3 -- -c 'import os'", progs: "capsh python3", unres: "cannot analyse"},
		{cmd: "capsh --print", progs: "capsh"},
		{cmd: "capsh -- <<< 'rm x'", progs: "capsh bash rm"},
		{cmd: "ssh-agent -k", progs: "ssh-agent"},
		{cmd: "ssh-agent -a sock -t 60 bash -c 'rm x'", progs: "ssh-agent bash rm"},
		{cmd: "strace -p 1", progs: "strace"},
		{cmd: "strace -e trace=open -E X=1 -- rm x", progs: "strace rm"},
		{cmd: "strace -E BASH_ENV='$(rm x)' bash -c :", progs: "strace bash :", unres: "BASH_ENV"},
		{cmd: "strace -o $out rm", progs: "strace", unres: "computed at run time"},
		{cmd: "dbus-run-session --config-file=x -- rm x", progs: "dbus-run-session rm"},
		{cmd: "dbus-run-session --dbus-daemon=./d ls", progs: "dbus-run-session d ls"},
		{cmd: "xargs setpriv", progs: "xargs setpriv", unres: "under xargs"},
	} {
		checkCase(t, Options{}, c)
	}
}

// TestSpecialFileAttacksAgainstBash runs lines whose shell reads its
// commands, or whose program is, a file under /proc or /dev reached by
// another spelling than /dev/stdin: each runs touch under bash, and the
// analysis must refuse it.
func TestSpecialFileAttacksAgainstBash(t *testing.T) {
	up := strings.Repeat("../", 12) // more than the depth of any temporary directory
	for _, cmd := range []string{
		"bash " + up + "dev/stdin <<< 'touch pwned'",
		"bash /proc/self/root/dev/stdin <<< 'touch pwned'",
		"bash /proc/thread-self/root/dev/stdin <<< 'touch pwned'",
		"bash /proc/self/root/proc/self/fd/0 <<< 'touch pwned'",
		"d=$PWD; cd /dev && bash stdin <<< \"cd $d; touch pwned\"",
		"d=$PWD; cd /dev && bash fd/3 3<<< \"cd $d; touch pwned\"",
		"bash " + up + "dev/fd/3 3<<< 'touch pwned'",
		"bash 3<<< 'touch pwned' < " + up + "dev/fd/3",
		"bash -s 3<<< 'touch pwned' < /proc/self/fd/3",
		"BASH_ENV=" + up + "dev/stdin bash -c : <<< 'touch pwned'",
		"BASH_ENV=/proc/self/root/dev/stdin bash -c : <<< 'touch pwned'",
		"env BASH_ENV=/proc/thread-self/root/dev/fd/0 bash -c : <<< 'touch pwned'",
		"bash --rcfile /proc/self/root/dev/stdin -ic true <<< 'touch pwned'",
		"bash -rcfile " + up + "dev/stdin -ic true <<< 'touch pwned'",
		"/proc/self/exe -c 'touch pwned'",
		"/proc/self/root/proc/self/exe -c 'touch pwned'",
		"PATH=/proc/self exe -c '/usr/bin/touch pwned'",
		"d=$PWD; cd /proc/self && ./exe -c \"cd $d; touch pwned\"",
		"d=$PWD; cd /proc && self/exe -c \"cd $d; touch pwned\"",
		"d=$PWD; for i in 1 2; do ./exe -c \"cd $d; touch pwned\"; cd /proc/self; done",
		"d=$PWD; cd /proc; cd self; ./exe -c \"cd $d; touch pwned\"",
		"d=$PWD; CDPATH=/proc; cd self && ./exe -c \"cd $d; touch pwned\"",
		"d=$PWD; cd " + up + " && proc/self/exe -c \"cd $d; touch pwned\"",
		"d=$PWD; cd " + up + "; cd proc; self/exe -c \"cd $d; touch pwned\"",
		"d=$PWD; env -C /dev bash fd/3 3<<< \"cd $d; touch pwned\"",
	} {
		replayTouch(t, cmd)
		checkRefused(t, Options{}, cmd)
	}
}

// TestAnalyzeSpecialFiles checks the names of programs, scripts and
// start-up files under /proc and /dev, relative names against Options.Dir
// and the directories the line changes into, and the names that stay
// allowed.
func TestAnalyzeSpecialFiles(t *testing.T) {
	root := Options{Dir: "/work/root"}
	slash := Options{Dir: "/"}
	for _, c := range []struct {
		o Options
		analyzeCase
	}{
		{root, analyzeCase{cmd: "./run.sh && bin/tool && bash x.sh", progs: "run.sh tool bash"}},
		{root, analyzeCase{cmd: "cd build && ./configure && make", progs: "cd configure make"}},
		{root, analyzeCase{cmd: "cd /tmp/b && ./a.out", progs: "cd a.out"}},
		{root, analyzeCase{cmd: "../../usr/bin/rm x", progs: "rm"}},
		{root, analyzeCase{cmd: "../../proc/self/exe -c x", progs: "exe", unres: "leads to /proc/self/exe"}},
		{root, analyzeCase{cmd: "bash --init-file /dev/null -c ls", progs: "bash ls"}},
		{root, analyzeCase{cmd: "BASH_ENV=/dev/null bash -c ls", progs: "bash ls"}},
		{root, analyzeCase{cmd: "bash /dev/null", progs: "bash"}},
		{root, analyzeCase{cmd: "/dev/null", progs: "null", unres: "under /proc or /dev"}},
		{root, analyzeCase{cmd: "bash /dev/fd/3 3<x", progs: "bash", unres: "under /proc or /dev"}},
		{root, analyzeCase{cmd: "bash /dev/stdin <<< ls", progs: "bash ls"}},
		{root, analyzeCase{cmd: "bash a/../x.sh", progs: "bash", unres: "holds .. after a directory name"}},
		{root, analyzeCase{cmd: "x/../../proc/self/exe", progs: "exe", unres: "holds .."}},
		{root, analyzeCase{cmd: "cd; ./x", progs: "cd x", unres: "not known"}},
		{root, analyzeCase{cmd: "cd /; proc/self/exe", progs: "cd exe", unres: "not known"}},
		{root, analyzeCase{cmd: "cd ..; ./x", progs: "cd x"}},
		{root, analyzeCase{cmd: "cd frontend; npm ci; cd ..; ./deploy.sh", progs: "cd npm cd deploy.sh"}},
		{root, analyzeCase{cmd: "cd ../..; proc/self/exe", progs: "cd exe", unres: "maybe to /"}},
		{root, analyzeCase{cmd: "cd ..; ../../dev/fd/3", progs: "cd 3", unres: "maybe to /"}},
		{root, analyzeCase{cmd: "for i in 1 2 3 4 5 6 7 8; do cd ..; done; cd proc; self/exe", progs: "cd cd exe", unres: "down into a directory named proc"}},
		{root, analyzeCase{cmd: "cd a/../..; ./x", progs: "cd x", unres: "after a directory name"}},
		{root, analyzeCase{cmd: "export PATH=$HOME/go/bin:${HOME}/.local/bin:$PATH; x", progs: "export x"}},
		{root, analyzeCase{cmd: "HOME=/proc/self; PATH=$HOME x", progs: "x", unres: "sets HOME"}},
		{root, analyzeCase{cmd: "PATH=$HOME$X x", progs: "x", unres: "computed at run time"}},
		{root, analyzeCase{cmd: "cd \"$d\" && bash stdin", progs: "cd bash", unres: "not known"}},
		{root, analyzeCase{cmd: "pushd /tmp; popd; ./x", progs: "pushd popd x"}},
		{root, analyzeCase{cmd: "pushd sub && ./x && popd && pushd +1 && ./y", progs: "pushd x popd pushd y"}},
		{root, analyzeCase{cmd: "pushd /proc/self; popd; ./exe", progs: "pushd popd exe", unres: "not known"}},
		{root, analyzeCase{cmd: "cd -; ./x", progs: "cd x", unres: "not known"}},
		{root, analyzeCase{cmd: "chroot /srv ./x", progs: "chroot x", unres: "not known"}},
		{root, analyzeCase{cmd: "sudo -D /proc/self ./exe", progs: "sudo exe", unres: "not known"}},
		{root, analyzeCase{cmd: "su - -c './x' u", progs: "su x", unres: "not known"}},
		{root, analyzeCase{cmd: "find /proc -name exe -execdir ./exe \\;", progs: "find exe", unres: "not known"}},
		{root, analyzeCase{cmd: "cd /tmp && ../proc/self/exe", progs: "cd exe", unres: "leads to /proc/self/exe"}},
		{root, analyzeCase{cmd: "PATH=\"$PATH:/opt/bin\" tool; PATH=bin:$PATH x", progs: "tool x"}},
		{root, analyzeCase{cmd: "PATH=/dev/fd x", progs: "x", unres: "under /proc or /dev"}},
		{root, analyzeCase{cmd: "export PATH=$(pwd)/bin; x", progs: "export pwd x", unres: "computed at run time"}},
		{root, analyzeCase{cmd: "read PATH; x", progs: "read x", unres: "PATH is set to a value computed"}},
		{root, analyzeCase{cmd: "HOME=/proc/self; PATH=~ exe", progs: "exe", unres: "sets HOME"}},
		{root, analyzeCase{cmd: "PATH=~/bin:$PATH x", progs: "x"}},
		{slash, analyzeCase{cmd: "bash dev/stdin <<< ls", progs: "bash", unres: "leads to /dev/stdin"}},
		{slash, analyzeCase{cmd: "proc/self/exe", progs: "exe", unres: "leads to /proc/self/exe"}},
		{slash, analyzeCase{cmd: "cd proc && self/exe", progs: "cd exe", unres: "descends from /"}},
		{Options{}, analyzeCase{cmd: "./x && bash y.sh", progs: "x bash"}},
		{Options{}, analyzeCase{cmd: "cd /proc/self && ./exe", progs: "cd exe", unres: "not known"}},
	} {
		checkCase(t, c.o, c.analyzeCase)
	}
}

// gbkLocale compiles the zh_CN.GBK locale into a new directory, for
// LOCPATH, or skips the test.
func gbkLocale(t *testing.T) string {
	t.Helper()
	localedef, err := exec.LookPath("localedef")
	if err != nil {
		t.Skip("localedef is not installed: a GBK locale cannot be compiled to replay the attacks")
	}
	dir := t.TempDir()
	out, err := exec.Command(localedef, "-i", "zh_CN", "-f", "GBK", filepath.Join(dir, "zh_CN.GBK")).CombinedOutput()
	if _, serr := os.Stat(filepath.Join(dir, "zh_CN.GBK")); serr != nil {
		// localedef exits 1 on warnings; only a missing locale matters.
		t.Skipf("localedef could not compile zh_CN.GBK (the zh_CN source or the GBK charmap may be missing): %v: %s", err, out)
	}
	return dir
}

// TestLocaleAttacksAgainstBash compiles a real GBK locale and replays lines
// that bash reads in it: the UTF-8 bytes of 中 end in 0xAD, and 0xAD 0x5C is
// one GBK character, so the backslash the parser takes as an escape is not
// one for bash. LOCPATH is given to bash by the test, as a locale installed
// system-wide would be; the analysis must refuse every line.
func TestLocaleAttacksAgainstBash(t *testing.T) {
	locpath := "LOCPATH=" + gbkLocale(t)
	for _, cmd := range []string{
		"LC_ALL=zh_CN.GBK bash -c 'echo 中\\; touch pwned'",
		"LC_ALL=zh_CN.GBK bash -c 'echo 中\\`touch pwned 中\\`'",
		"LC_ALL=zh_CN.GBK\necho 中\\; touch pwned",
		"export LC_CTYPE=zh_CN.GBK\necho 中\\; touch pwned",
		"LANG=zh_CN.GBK bash -c 'echo 中\\; touch pwned'",
		"env LC_ALL=zh_CN.GBK bash -c 'echo 中\\; touch pwned'",
		"declare -x LC_ALL=zh_CN.GBK; bash -c 'echo 中\\; touch pwned'",
		"read LC_ALL <<< zh_CN.GBK\necho 中\\; touch pwned",
		"for LC_ALL in zh_CN.GBK; do :; done\necho 中\\; touch pwned",
		"x=zh_CN.GBK; LC_ALL=$x bash -c 'echo 中\\; touch pwned'",
		"strace -qq -o /dev/null -E LC_ALL=zh_CN.GBK bash -c 'echo 中\\; touch pwned'",
	} {
		if !strings.HasPrefix(cmd, "strace") || hasProgram("strace") {
			replayTouch(t, cmd, locpath)
		}
		// The analysis parses as UTF-8: echo with an escaped ;, or with
		// escaped backquotes, and no touch.
		if a := Analyze(cmd); a.Unresolved == "" {
			t.Errorf("Analyze(%q) = %q, resolved, but bash ran touch in GBK", cmd, a.Programs())
		}
	}
	// LOCPATH in the line picks the locale directory itself.
	if a := Analyze("LOCPATH=$PWD LC_ALL=zh_CN.GBK bash -c 'echo 中\\; touch pwned'"); a.Unresolved == "" {
		t.Errorf("LOCPATH in the line was not refused: %q", a.Programs())
	}
}

func hasProgram(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

// TestLocaleAssignments checks which locale values the analysis accepts.
func TestLocaleAssignments(t *testing.T) {
	for _, c := range []analyzeCase{
		{cmd: "LC_ALL=C sort f", progs: "sort"},
		{cmd: "LC_ALL=C.UTF-8 LANG=en_US.utf8 LC_CTYPE=zh_CN.UTF-8@pinyin ls", progs: "ls"},
		{cmd: "export LANG=POSIX; ls", progs: "export ls"},
		{cmd: "LANGUAGE=zh_TW:en ls", progs: "ls"}, // messages only, never the character set
		{cmd: "LC_ALL=zh_TW ls", progs: "ls", unres: "LC_ALL=zh_TW selects a locale"},
		{cmd: "LC_CTYPE=ja_JP.SJIS ls", progs: "ls", unres: "LC_CTYPE=ja_JP.SJIS"},
		{cmd: "env LANG=zh_HK.BIG5-HKSCS ls", progs: "env ls", unres: "LANG=zh_HK.BIG5-HKSCS"},
		{cmd: "LC_ALL=/tmp/x.UTF-8 ls", progs: "ls", unres: "selects a locale"},
		{cmd: "LC_ALL=$L ls", progs: "ls", unres: "not known statically"},
		{cmd: "unset LC_ALL; ls", progs: "unset ls", unres: "LC_ALL"},
		{cmd: "LOCPATH=/usr/lib/locale ls", progs: "ls", unres: "LOCPATH"},
		{cmd: "sudo LC_ALL=zh_CN.GBK bash -c ls", progs: "sudo bash ls", unres: "LC_ALL=zh_CN.GBK"},
	} {
		checkCase(t, Options{}, c)
	}
}

// gitRepo makes a repository in dir/work whose origin is the bare
// repository dir/remote.git, with one commit on main, and returns a
// function reporting whether main reached the remote.
func gitRepo(t *testing.T, dir string) (pushed func() bool) {
	t.Helper()
	git := func(d string, args ...string) {
		c := exec.Command("git", args...)
		c.Dir = d
		c.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	work := filepath.Join(dir, "work")
	git(dir, "init", "-q", "--bare", "remote.git")
	git(dir, "init", "-q", "-b", "main", "work")
	git(work, "commit", "-q", "--allow-empty", "-m", "x")
	git(work, "remote", "add", "origin", "../remote.git")
	return func() bool {
		_, err := os.Stat(filepath.Join(dir, "remote.git", "refs", "heads", "main"))
		return err == nil
	}
}

// TestGitGlobalOptionAttacksAgainstGit runs pushes spelt with git's global
// options and aliases with the real git: each pushes, and a deny list of
// "git push" must refuse it; an allow list of "git push" must refuse the
// aliases and configuration, which may run anything.
func TestGitGlobalOptionAttacksAgainstGit(t *testing.T) {
	if !hasProgram("git") || !hasProgram("bash") {
		t.Skip("git or bash is not installed: the pushes cannot be replayed")
	}
	deny := &Filter{Deny: []string{"git push"}}
	for _, cmd := range []string{
		"git -C . push -q origin main",
		"git --git-dir=.git push -q origin main",
		"git --git-dir .git --work-tree . push -q origin main",
		"git --work-tree=. push -q origin main",
		"git -c x.y=z push -q origin main",
		"git --no-pager push -q origin main",
		"git -P push -q origin main",
		"git -p push -q origin main",
		"git --literal-pathspecs --no-optional-locks --no-replace-objects push -q origin main",
		"git --bare --git-dir=.git push -q origin main",
		"git -c alias.p=push p -q origin main",
		"git --config-env=alias.p=P p -q origin main",
		"P=push git --config-env alias.p=P p -q origin main",
		"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git p -q origin main",
		"GIT_CONFIG_PARAMETERS=\"'alias.p'='push'\" git p -q origin main",
		"git config alias.p push && git p -q origin main",
		"$(git --exec-path)/git-push -q origin main",
		"/usr/lib/git-core/git-push -q origin main",
	} {
		if strings.Contains(cmd, "/usr/lib/git-core/") {
			if _, err := os.Stat("/usr/lib/git-core/git-push"); err != nil {
				continue
			}
		}
		dir := t.TempDir()
		pushed := gitRepo(t, dir)
		c := exec.Command("bash", "-c", cmd)
		c.Dir = filepath.Join(dir, "work")
		c.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "P=push"}
		if out, err := c.CombinedOutput(); err != nil || !pushed() {
			t.Errorf("%q did not push, so the case tests nothing: %v: %s", cmd, err, out)
			continue
		}
		if err := deny.Check(cmd); !errors.Is(err, helikon.ErrDenied) {
			t.Errorf("deny git push allowed %q: %v (%v)", cmd, err, Analyze(cmd).Commands)
		}
	}
}

// TestGitSubcommandMatching checks how git commands match leading-argument
// patterns once global options are removed.
func TestGitSubcommandMatching(t *testing.T) {
	for _, c := range []struct {
		cmd, allow, deny string
		allowed          bool
	}{
		{cmd: "git -C sub status", allow: "git status", deny: "git push", allowed: true},
		{cmd: "git --no-pager log -1", allow: "git log", deny: "git push", allowed: true},
		{cmd: "git --help push", allow: "git help", deny: "git push", allowed: true},
		{cmd: "git -v", allow: "git version", deny: "git push", allowed: true},
		{cmd: "git status", allow: "git status", deny: "git push", allowed: true},
		{cmd: "git -c color.ui=never status", allow: "git status", deny: "git push", allowed: false},
		{cmd: "git st", allow: "git st", deny: "git push", allowed: false},
		{cmd: "git lfs ls-files", allow: "git", deny: "git rm", allowed: false},
		{cmd: "git lfs ls-files", allow: "git", deny: "rm", allowed: true},
		{cmd: "git --exec-path=/tmp status", allow: "git status", deny: "git push", allowed: false},
		{cmd: "GIT_CONFIG_GLOBAL=/tmp/x git status", allow: "git status", deny: "git push", allowed: false},
		{cmd: "git --bogus push", allow: "git", deny: "git push", allowed: true}, // git exits: unknown option
		{cmd: "git -C", allow: "git", deny: "git push", allowed: true},
		{cmd: "git --exec-path", allow: "git", deny: "git push", allowed: true},
	} {
		allow := (&Filter{Allow: []string{c.allow}}).Check(c.cmd)
		deny := (&Filter{Deny: []string{c.deny}}).Check(c.cmd)
		if got := allow == nil && deny == nil; got != c.allowed {
			t.Errorf("%q under allow %q, deny %q: allow list says %v, deny list says %v, want allowed %v (%v)", c.cmd, c.allow, c.deny, allow, deny, c.allowed, Analyze(c.cmd).Commands)
		}
	}
}
