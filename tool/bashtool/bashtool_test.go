package bashtool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/tool/bashtool"
	"github.com/paigasus/helikon/workspace/fsroot"
)

type app = struct{}

func newTool(t testing.TB, hopts *host.Options, opts *bashtool.Options) (*bashtool.Tool[app], string) {
	t.Helper()
	sb, err := fsroot.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	b, err := host.New(sb.Dir(), hopts)
	if err != nil {
		t.Fatal(err)
	}
	tool, err := bashtool.New[app](b, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tool, sb.Dir()
}

func invoke(t testing.TB, tool *bashtool.Tool[app], args string) (map[string]any, error) {
	t.Helper()
	tc := helikon.NewToolContext(context.Background(), app{}, nil)
	out, err := tool.Invoke(tc, json.RawMessage(args))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("output %s: %v", out, err)
	}
	return m, nil
}

func TestToolContract(t *testing.T) {
	t.Parallel()
	tool, _ := newTool(t, &host.Options{Timeout: 10 * time.Second}, &bashtool.Options{DenyCommands: []string{"rm"}})
	if tool.Name() != "Bash" || helikon.EffectOf(tool) != helikon.EffectSideEffect {
		t.Errorf("name %q effect %v", tool.Name(), helikon.EffectOf(tool))
	}
	d := tool.Description()
	for _, want := range []string{"host (no containment)", "10s", "rm"} {
		if !strings.Contains(d, want) {
			t.Errorf("description lacks %q: %s", want, d)
		}
	}
	if _, err := helikon.NewToolset[app](tool); err != nil {
		t.Error(err)
	}
	out := helikon.OutputSchemaOf(tool)
	if out == nil || out.Properties["exit_code"] == nil {
		t.Fatalf("output schema %v", out)
	}
}

func TestInvokeResults(t *testing.T) {
	t.Parallel()
	tool, _ := newTool(t, &host.Options{Timeout: 20 * time.Second, OutputCap: 8}, nil)
	tests := []struct {
		args string
		want map[string]any
	}{
		{`{"command":"echo hi; echo err >&2"}`, map[string]any{"stdout": "hi\n", "stderr": "err\n", "exit_code": 0.0, "timed_out": false, "truncated": false}},
		{`{"command":"exit 7","description":"fails on purpose"}`, map[string]any{"exit_code": 7.0, "timed_out": false}},
		{`{"command":"kill -9 $$"}`, map[string]any{"exit_code": nil, "timed_out": false}},
		{`{"command":"sleep 60","timeout_ms":200}`, map[string]any{"exit_code": nil, "timed_out": true}},
		{`{"command":"echo 0123456789"}`, map[string]any{"stdout": "01234567", "exit_code": 0.0, "truncated": true}},
	}
	for _, tt := range tests {
		got, err := invoke(t, tool, tt.args)
		if err != nil {
			t.Errorf("%s: %v", tt.args, err)
			continue
		}
		for k, v := range tt.want {
			if g, ok := got[k]; !ok || g != v {
				t.Errorf("%s: %s = %#v, want %#v", tt.args, k, got[k], v)
			}
		}
	}
}

func TestInvokeInvalidArgs(t *testing.T) {
	t.Parallel()
	tool, _ := newTool(t, nil, nil)
	for _, args := range []string{`{}`, `{"command":1}`, `{"command":"true","timeout_ms":0}`, `{"command":"true","timeout_ms":-5}`,
		`{"command":"true","timeout_ms":"5s"}`, `{"command":"true","cwd":"/"}`, `[]`, `not json`} {
		_, err := invoke(t, tool, args)
		if helikon.KindOf(err) != helikon.KindInvalidArgs {
			t.Errorf("%s: err %v, want invalid arguments", args, err)
		}
	}
}

// TestDenyListStopsBypasses runs each command for real against a file and
// checks both that the tool refuses it and that the file survives: remove
// the deny list and every case fails.
func TestDenyListStopsBypasses(t *testing.T) {
	t.Parallel()
	tool, dir := newTool(t, nil, &bashtool.Options{DenyCommands: []string{"rm"}})
	victim := filepath.Join(dir, "victim")
	attacks := []string{
		`rm victim`, `/bin/rm victim`, `/usr/bin/rm victim`, `./../../bin/rm victim`, `\rm victim`, `r''m victim`, `"rm" victim`,
		`'r'"m" victim`, `$'\x72m' victim`, `true && rm victim`, `false || rm victim`, `echo ok; rm victim`, `echo | rm victim`,
		`rm victim &`, `(rm victim)`, `{ rm victim; }`, `echo $(rm victim)`, "echo `rm victim`", `cat <(rm victim)`,
		`if true; then rm victim; fi`, `for f in victim; do rm $f; done`, `while rm victim; do break; done`,
		`f() { rm victim; }; f`, `env rm victim`, `env -i FOO=1 rm victim`, `command rm victim`, `builtin command rm victim`,
		`exec rm victim`, `nice -n 5 rm victim`, `nohup rm victim`, `timeout 5s rm victim`, `timeout -s KILL 5 rm victim`,
		`stdbuf -o0 rm victim`, `time rm victim`, `sudo rm victim`, `xargs rm <<< victim`, `echo victim | xargs -n1 rm`,
		`find . -name victim -exec rm {} \;`, `find . -name victim -execdir rm {} +`, `sh -c 'rm victim'`, `bash -c "rm victim"`,
		`sh -c "sh -c 'rm victim'"`, `CMD=rm; $CMD victim`, `$(echo rm) victim`, "`echo rm` victim", `eval rm victim`,
		`eval "r""m victim"`, `echo rm victim > x.sh; source x.sh`, `echo rm victim > x.sh; . ./x.sh`, `r\m victim`,
		`rm${IFS}victim`, `echo "rm victim" | sh`, `sh <<< "rm victim"`, `if [ ; then`, `a=r; b=m; $a$b victim`,
	}
	for _, cmd := range attacks {
		if err := os.WriteFile(victim, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		args, _ := json.Marshal(map[string]string{"command": cmd})
		_, err := invoke(t, tool, string(args))
		if helikon.KindOf(err) != helikon.KindDenied {
			t.Errorf("%s: err %v, want denied", cmd, err)
		}
		if _, err := os.Stat(victim); err != nil {
			t.Errorf("%s: the victim was removed", cmd)
		}
	}
	for _, cmd := range []string{`echo rm victim`, `ls`, `grep -r rm .`, `echo "rm" > note`} {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		if _, err := invoke(t, tool, string(args)); err != nil {
			t.Errorf("%s: %v, want it allowed", cmd, err)
		}
	}
}

func TestAllowListFailsClosed(t *testing.T) {
	t.Parallel()
	tool, _ := newTool(t, nil, &bashtool.Options{AllowCommands: []string{"echo", "git status"}})
	allowed := []string{`echo hi`, `echo a && echo b`, `echo "$(echo nested)"`}
	denied := []string{`ls`, `echo hi; ls`, `git push`, `git`, `$X`, `eval echo`, `sh -c 'ls'`, `echo $(ls)`, `/bin/ls`, `env ls`, `((`}
	for _, cmd := range allowed {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		if _, err := invoke(t, tool, string(args)); err != nil {
			t.Errorf("%s: %v, want allowed", cmd, err)
		}
	}
	for _, cmd := range denied {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		_, err := invoke(t, tool, string(args))
		var de *helikon.DeniedError
		if !errors.As(err, &de) || de.Reason == "" {
			t.Errorf("%s: err %v, want denied with a reason", cmd, err)
		}
	}
	if _, err := bashtool.New[app](tool.Backend(), &bashtool.Options{DenyCommands: []string{"  "}}); err == nil {
		t.Error("an empty pattern was accepted")
	}
}

func TestTargets(t *testing.T) {
	t.Parallel()
	tool, dir := newTool(t, nil, nil)
	args := json.RawMessage(`{"command":"echo hi > out.txt; sudo rm -rf build 2>>/var/log/x"}`)
	tg, err := tool.Targets(args)
	if err != nil {
		t.Fatal(err)
	}
	// The decoded arguments ride with the targets, so a checked call does
	// not decode them again (functiontool's TestCheckedCallDecodesOnce).
	if _, ok := tg.Decoded(args); !ok {
		t.Error("the targets do not carry the decoded arguments")
	}
	var progs []string
	for _, c := range tg.Commands {
		progs = append(progs, strings.Join(c.Args, " "))
	}
	if got := strings.Join(progs, "|"); got != "echo hi|sudo rm -rf build|rm -rf build|> "+filepath.Join(dir, "out.txt")+"|> /var/log/x" {
		t.Errorf("commands %q", got)
	}
	if len(tg.Paths) != 2 || tg.Paths[0].Path != filepath.Join(dir, "out.txt") || tg.Paths[1].Path != "/var/log/x" ||
		tg.Paths[0].Access != helikon.AccessWrite || tg.Paths[0].Root != dir || tg.Unresolved != "" {
		t.Errorf("targets %+v", tg)
	}
	tg, _ = tool.Targets(json.RawMessage(`{"command":"$CMD x"}`))
	if tg.Unresolved == "" {
		t.Error("a computed program name was reported as resolved")
	}
	if _, err := tool.Targets(json.RawMessage(`{"command":5}`)); helikon.KindOf(err) != helikon.KindInvalidArgs {
		t.Errorf("invalid args: %v", err)
	}
}

// TestTargetsReportEachCommandsDirectories: a command is reported with the
// directories a literal cd on the line leads to, and with why it may run in
// another after a cd the line cannot follow, so that the policy-file guard
// resolves relative arguments where they lead.
func TestTargetsReportEachCommandsDirectories(t *testing.T) {
	t.Parallel()
	tool, dir := newTool(t, nil, nil)
	tests := []struct {
		command string
		dirs    []string
		unknown bool
	}{
		{"cp a b", []string{dir}, false},
		{"cd prep && cp ../evil.json ../.claude/settings.json", []string{dir, filepath.Join(dir, "prep")}, false},
		{"cp x y; cd /srv/a", []string{dir, "/srv/a"}, false},
		{`cd "$d" && sed -i x settings.json`, []string{dir}, true},
		{"env -C sub cp x settings.json", []string{dir}, true},
		{"cd - && cp x y", []string{dir}, true},
	}
	for _, tt := range tests {
		tg, err := tool.Targets(json.RawMessage(`{"command":` + strconv.Quote(tt.command) + `}`))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range tg.Commands {
			if !slices.Equal(c.Dirs, tt.dirs) || (c.DirUnknown != "") != tt.unknown {
				t.Errorf("%s: %q runs in %q (unknown %q), want %q (unknown %v)", tt.command, c.Args, c.Dirs, c.DirUnknown, tt.dirs, tt.unknown)
			}
		}
	}
}

// TestPermissionRulesUseTheMatcher runs Bash(...) rules of the permission
// pipeline against the tool's targets.
func TestPermissionRulesUseTheMatcher(t *testing.T) {
	t.Parallel()
	tool, dir := newTool(t, nil, nil)
	deny := &helikon.Permissions{Deny: []helikon.Rule{helikon.MustParseRule("Bash(rm)")}}
	allow := &helikon.Permissions{Allow: []helikon.Rule{helikon.MustParseRule("Bash(echo)"), helikon.MustParseRule("Bash(git status)")}}
	redirects := &helikon.Permissions{Allow: append(slices.Clone(allow.Allow), helikon.MustParseRule("Bash(>)"))}
	oneTarget := &helikon.Permissions{Allow: append(slices.Clone(allow.Allow), helikon.MustParseRule("Bash(> "+filepath.Join(dir, "out", "log")+")"))}
	noRedirects := &helikon.Permissions{Deny: []helikon.Rule{helikon.MustParseRule("Bash(>)")}}
	tests := []struct {
		p       *helikon.Permissions
		mode    helikon.PermissionMode
		command string
		allowed bool
	}{
		{deny, helikon.ModeDefault, "ls -la", true},
		{deny, helikon.ModeDefault, "/bin/rm -f x", false},
		{deny, helikon.ModeDefault, `bash -c "echo; r''m x"`, false},
		{deny, helikon.ModeDefault, `find . -exec rm {} \;`, false},
		{deny, helikon.ModeDefault, `$(printf rm) x`, false},
		{deny, helikon.ModeBypass, "timeout 5s rm x", false},
		{allow, helikon.ModeDontAsk, "echo hi", true},
		{allow, helikon.ModeDontAsk, "git status", true},
		{allow, helikon.ModeDontAsk, "echo hi | git status", true},
		{allow, helikon.ModeDontAsk, "echo hi; ls", false},
		{allow, helikon.ModeDontAsk, "git push", false},
		{allow, helikon.ModeDontAsk, "eval echo hi", false},
		{&helikon.Permissions{}, helikon.ModeBypass, "echo x > /etc/passwd", false}, // guard, no approver
		{&helikon.Permissions{}, helikon.ModeBypass, "echo x > .git/config", false},
		{&helikon.Permissions{}, helikon.ModeBypass, "rm -rf /", false},
		{&helikon.Permissions{}, helikon.ModeBypass, "echo x > notes.txt", true},
		// The shell's working directory and $HOME, not the sandbox root,
		// decide where a relative or $HOME-based redirection writes.
		{&helikon.Permissions{}, helikon.ModeBypass, "cd /etc && echo x > passwd", false},
		{&helikon.Permissions{}, helikon.ModeBypass, "cd /; cd etc; echo x >> hosts", false},
		{&helikon.Permissions{}, helikon.ModeBypass, "pushd /usr/lib >/dev/null; echo x > libc.so.6", false},
		{&helikon.Permissions{}, helikon.ModeBypass, "cd; echo key >> .ssh/authorized_keys", false},
		{&helikon.Permissions{}, helikon.ModeBypass, "cd ~/.ssh && echo key >> authorized_keys", false},
		{&helikon.Permissions{}, helikon.ModeBypass, "echo x > \"$HOME/../../etc/passwd\"", false},
		{&helikon.Permissions{}, helikon.ModeBypass, "echo key >> ${HOME}/.ssh/authorized_keys", false},
		{&helikon.Permissions{}, helikon.ModeBypass, "cd sub && echo x > notes.txt", true},
		// A computed target is reported as written and does not fail
		// closed (see Tool.Targets): ordinary commands stay usable.
		{&helikon.Permissions{}, helikon.ModeBypass, "out=log.txt; make > \"$out\"", true},
		// A redirection is a write the shell makes: an allow rule of
		// programs does not cover it, Bash(>) does; device sinks are no
		// writes.
		{allow, helikon.ModeDontAsk, "echo hi > \"$out\"", false},
		{allow, helikon.ModeDontAsk, "git status > canary", false},
		{allow, helikon.ModeDontAsk, "git status >> canary 2>&1", false},
		{allow, helikon.ModeDontAsk, "git status &> canary", false},
		{allow, helikon.ModeDontAsk, "sh -c 'git status > canary'", false},
		{allow, helikon.ModeDontAsk, "git status 3<> canary", false},
		{allow, helikon.ModeDontAsk, "git status > /dev/null 2>&1", true},
		{allow, helikon.ModeDontAsk, "git status 2>/dev/stderr >&2 >/dev/fd/1", true},
		{redirects, helikon.ModeDontAsk, "git status > canary", true},
		{redirects, helikon.ModeDontAsk, "git status > \"$f\"", true},
		{oneTarget, helikon.ModeDontAsk, "git status > out/log", true},
		{oneTarget, helikon.ModeDontAsk, "git status > out/other", false},
		{oneTarget, helikon.ModeDontAsk, "git status > \"$f\"", false},
		{noRedirects, helikon.ModeBypass, "ls > x", false},
		{noRedirects, helikon.ModeBypass, "ls > /dev/null", true},
	}
	for _, tt := range tests {
		args, _ := json.Marshal(map[string]string{"command": tt.command})
		d := tt.p.Check(context.Background(), helikon.CallFor[app](tool, args, tt.mode))
		if d.Allowed != tt.allowed {
			t.Errorf("%s (%s): allowed %v (%s), want %v", tt.command, tt.mode, d.Allowed, d.Reason, tt.allowed)
		}
	}
}

func TestFiftyConcurrentCalls(t *testing.T) {
	t.Parallel()
	tool, _ := newTool(t, nil, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		wg.Go(func() {
			out, err := invoke(t, tool, fmt.Sprintf(`{"command":"echo %d; sleep 0.05; echo %d >&2; exit %d"}`, i, i, i%7))
			switch {
			case err != nil:
				errs <- err
			case out["stdout"] != fmt.Sprintf("%d\n", i) || out["stderr"] != fmt.Sprintf("%d\n", i) || out["exit_code"] != float64(i%7):
				errs <- fmt.Errorf("call %d got %v", i, out)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestInvokeCancellation(t *testing.T) {
	t.Parallel()
	tool, dir := newTool(t, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if _, err := os.Stat(filepath.Join(dir, "running")); err == nil {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	start := time.Now()
	_, err := tool.Invoke(helikon.NewToolContext(ctx, app{}, nil), json.RawMessage(`{"command":"touch running; sleep 60"}`))
	if !errors.Is(err, context.Canceled) || time.Since(start) > 30*time.Second {
		t.Errorf("err %v after %v, want context.Canceled promptly", err, time.Since(start))
	}
}

func TestNewRejectsNilBackend(t *testing.T) {
	t.Parallel()
	if _, err := bashtool.New[app](nil, nil); err == nil {
		t.Error("New accepted a nil backend")
	}
}

func FuzzTargets(f *testing.F) {
	for _, s := range []string{"echo hi > x", "rm -rf /", "$X", "sh -c 'eval x'", "a=(", "cat <<E\nx\nE",
		"git status > canary", "ls &>> \"$f\"", "cd /tmp && echo > x", "bash -c 'echo >&3 3>y'", "x 2>/dev/null >/dev/fd/1"} {
		f.Add(s)
	}
	tool, dir := newTool(f, nil, nil)
	denyAll, err := bashtool.New[app](tool.Backend(), &bashtool.Options{DenyCommands: []string{"zzz-never"}})
	if err != nil {
		f.Fatal(err)
	}
	perms := &helikon.Permissions{Deny: []helikon.Rule{helikon.MustParseRule("Bash(zzz-never)")}, NoGuards: true}
	f.Fuzz(func(t *testing.T, command string) {
		args, _ := json.Marshal(map[string]string{"command": command})
		tg, err := denyAll.Targets(args)
		if err != nil {
			t.Fatalf("Targets: %v", err)
		}
		redirects := map[string]bool{}
		for _, c := range tg.Commands {
			if len(c.Args) == 2 && c.Args[0] == ">" {
				redirects[c.Args[1]] = true
			}
		}
		for _, p := range tg.Paths {
			if !filepath.IsAbs(p.Path) || filepath.Clean(p.Path) != p.Path || p.Root != dir {
				t.Fatalf("path target %+v", p)
			}
			// Every file a redirection writes is a > command too, which
			// Bash(...) allow rules of programs do not cover.
			if p.Access == helikon.AccessWrite && !redirects[p.Path] && !strings.HasPrefix(p.Path, "/dev/") {
				t.Fatalf("%q writes %s, which is not reported as a > command: %v", command, p.Path, tg.Commands)
			}
		}
		d := perms.Check(context.Background(), helikon.CallFor[app](denyAll, args, helikon.ModeBypass))
		if tg.Unresolved != "" && d.Allowed {
			t.Fatalf("%q is unresolved (%s) but a deny rule let it through", command, tg.Unresolved)
		}
	})
}

// BenchmarkRoundTrip compares a Bash tool call through the host backend
// with running the same program with exec.Command(...).Run() in the same
// run. Each iteration runs the program with exec, with exec.Command("bash",
// "-c", command) and through the tool, back to back, so that a change of
// machine load affects all three alike. It reports each one's mean time per
// call and the ratios tool/exec (x-exec) and tool/bash (x-bash), and the
// same from the medians (p50), which a loaded machine's scheduling stalls
// (a few calls in a hundred taking tens of milliseconds) do not move.
//
//   - true: the issue's benchmark. `true` alone takes the direct path (the
//     bash builtin and /usr/bin/true do the same thing: nothing).
//   - uname: a program that is not a builtin, with output to capture.
//   - shell: `true; true`, which needs bash: what every command that is not
//     a literal simple command costs.
func BenchmarkRoundTrip(b *testing.B) {
	for _, bc := range []struct {
		name, command string
		argv          []string
	}{
		{"true", "true", []string{"true"}},
		{"uname", "uname -s", []string{"uname", "-s"}},
		{"shell", "true; true", []string{"true"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tool, _ := newTool(b, nil, nil)
			tc := helikon.NewToolContext(context.Background(), app{}, nil)
			args, err := json.Marshal(bashtool.Args{Command: bc.command})
			if err != nil {
				b.Fatal(err)
			}
			var execT, bashT, toolT []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if err := exec.Command(bc.argv[0], bc.argv[1:]...).Run(); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := exec.Command("bash", "-c", bc.command).Run(); err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				if _, err := tool.Invoke(tc, args); err != nil {
					b.Fatal(err)
				}
				t3 := time.Now()
				execT = append(execT, t1.Sub(t0))
				bashT = append(bashT, t2.Sub(t1))
				toolT = append(toolT, t3.Sub(t2))
			}
			mean := func(d []time.Duration) float64 {
				var sum time.Duration
				for _, x := range d {
					sum += x
				}
				return float64(sum.Nanoseconds()) / float64(len(d))
			}
			median := func(d []time.Duration) float64 {
				slices.Sort(d)
				return float64(d[len(d)/2].Nanoseconds())
			}
			b.ReportMetric(mean(execT), "exec-ns/op")
			b.ReportMetric(mean(bashT), "bash-ns/op")
			b.ReportMetric(mean(toolT), "tool-ns/op")
			b.ReportMetric(mean(toolT)/mean(execT), "x-exec")
			b.ReportMetric(mean(toolT)/mean(bashT), "x-bash")
			b.ReportMetric(median(execT), "exec-p50-ns")
			b.ReportMetric(median(bashT), "bash-p50-ns")
			b.ReportMetric(median(toolT), "tool-p50-ns")
			b.ReportMetric(median(toolT)/median(execT), "x-exec-p50")
			b.ReportMetric(median(toolT)/median(bashT), "x-bash-p50")
		})
	}
}

// The Bash tool over the host backend, in a sandbox directory.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "bash-example")
	defer os.RemoveAll(dir)
	sb, err := fsroot.Open(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	b, err := host.New(sb.Dir(), &host.Options{Timeout: 10 * time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	tool, err := bashtool.New[struct{}](b, &bashtool.Options{DenyCommands: []string{"rm"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)
	out, err := tool.Invoke(tc, json.RawMessage(`{"command":"echo hello; exit 3"}`))
	fmt.Println(string(out), err)
	_, err = tool.Invoke(tc, json.RawMessage(`{"command":"/bin/rm -rf ."}`))
	fmt.Println(helikon.KindOf(err))
	// Output:
	// {"stdout":"hello\n","stderr":"","exit_code":3,"timed_out":false,"truncated":false} <nil>
	// denied
}

var _ backend.Backend = (*host.Backend)(nil)

// An empty command is the model's to fix (invalid arguments), not a
// failure of the backend.
func TestEmptyCommandIsInvalidArgs(t *testing.T) {
	b, err := host.New(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tool, err := bashtool.New[struct{}](b, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"", "  ", "\n\t"} {
		args, _ := json.Marshal(bashtool.Args{Command: cmd})
		_, err := helikon.CallTool(helikon.NewToolContext(t.Context(), struct{}{}, nil), &helikon.Permissions{}, helikon.Tool[struct{}](tool), args)
		if helikon.KindOf(err) != helikon.KindInvalidArgs || !strings.Contains(err.Error(), "command is empty") {
			t.Errorf("%q: %v, want invalid arguments saying the command is empty", cmd, err)
		}
	}
}
