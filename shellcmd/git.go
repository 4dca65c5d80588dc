package shellcmd

import (
	"strings"
)

// git is listed with its global options removed, so that a leading-argument
// pattern such as "git push" compares git's subcommand: git -C . push,
// git --git-dir=.git push and git -c x=y push are listed as git push (and
// git --help push as git help push). Where the subcommand may not be the
// command that runs, it is listed as a word computed at run time, which a
// deny pattern naming a git subcommand matches and an allow pattern does
// not (see [helikon.Command.DeniedBy]):
//
//   - a name that is not one of git's own commands may be an alias, which
//     the configuration defines (git -c alias.p=push p, or a git config
//     alias.p push earlier);
//   - -c and --config-env set configuration, GIT_CONFIG_COUNT,
//     GIT_CONFIG_KEY_n, GIT_CONFIG_VALUE_n, GIT_CONFIG_PARAMETERS,
//     GIT_CONFIG, GIT_CONFIG_GLOBAL and GIT_CONFIG_SYSTEM, set anywhere in
//     the line, change what git reads, and --exec-path=DIR and GIT_EXEC_PATH
//     where it finds its programs.
//
// An alias cannot hide one of git's own commands, so git -c alias.push=x
// push still pushes; the configuration can make those commands run others
// (core.pager, core.fsmonitor, hooks), which is why git is a code runner.

// gitCommands are the commands git runs itself rather than as an alias: the
// builtins of git 2.39 (git --list-cmds=builtins) and the programs every
// git installation ships in its exec path, which git prefers to an alias of
// the same name. An older git lacks some (switch and restore came in 2.23),
// and there that name may be an alias.
var gitCommands = map[string]bool{}

func init() {
	for _, c := range strings.Fields(`add am annotate apply archive bisect--helper blame branch bugreport bundle
		cat-file check-attr check-ignore check-mailmap check-ref-format checkout checkout--worker checkout-index
		cherry cherry-pick clean clone column commit commit-graph commit-tree config count-objects credential
		credential-cache credential-cache--daemon credential-store describe diagnose diff diff-files diff-index
		diff-tree difftool env--helper fast-export fast-import fetch fetch-pack fmt-merge-msg for-each-ref
		for-each-repo format-patch fsck fsck-objects fsmonitor--daemon gc get-tar-commit-id grep hash-object help
		hook index-pack init init-db interpret-trailers log ls-files ls-remote ls-tree mailinfo mailsplit
		maintenance merge merge-base merge-file merge-index merge-ours merge-recursive merge-recursive-ours
		merge-recursive-theirs merge-subtree merge-tree mktag mktree multi-pack-index mv name-rev notes
		pack-objects pack-redundant pack-refs patch-id pickaxe prune prune-packed pull push range-diff read-tree
		rebase receive-pack reflog remote remote-ext remote-fd repack replace rerere reset restore rev-list
		rev-parse revert rm send-pack shortlog show show-branch show-index show-ref sparse-checkout stage stash
		status stripspace submodule--helper switch symbolic-ref tag unpack-file unpack-objects update-index
		update-ref update-server-info upload-archive upload-archive--writer upload-pack var verify-commit
		verify-pack verify-tag version whatchanged worktree write-tree
		submodule mergetool request-pull filter-branch quiltimport instaweb web--browse sh-i18n--envsubst
		shell`) {
		gitCommands[c] = true
	}
}

// Global options of git 2.39 (git help git; handle_options in git.c), which
// matches them exactly, without abbreviations.
var (
	gitFlags = map[string]bool{
		"-p": true, "--paginate": true, "-P": true, "--no-pager": true, "--no-replace-objects": true,
		"--bare": true, "--literal-pathspecs": true, "--no-literal-pathspecs": true, "--glob-pathspecs": true,
		"--noglob-pathspecs": true, "--icase-pathspecs": true, "--no-optional-locks": true,
		"--no-lazy-fetch": true, "--no-advice": true,
	}
	// gitValued take the next word, or (long ones) =VALUE.
	gitValued = map[string]bool{
		"-C": true, "-c": true, "--git-dir": true, "--work-tree": true, "--namespace": true,
		"--super-prefix": true, "--config-env": true, "--shallow-file": true, "--attr-source": true,
	}
	// gitQueries print something and exit.
	gitQueries = map[string]bool{"--exec-path": true, "--html-path": true, "--man-path": true, "--info-path": true, "--list-cmds": true}
)

// gitState is what the line does to the commands git runs.
type gitState struct {
	// config names a variable the line sets that changes git's
	// configuration or exec path, or "".
	config string
}

// gitFields returns git's argument vector with its global options removed
// and its subcommand marked computed at run time where it may not be the
// command that runs.
func (a *analyzer) gitFields(fields []field) []field {
	config := false // the options change git's configuration or exec path
	i := 1
options:
	for i < len(fields) {
		f := fields[i]
		if f.dynamic || !strings.HasPrefix(f.text, "-") {
			break
		}
		t := f.text
		long, _, hasVal := strings.Cut(t, "=")
		switch {
		case gitFlags[t]:
			i++
		case t == "-v" || t == "--version" || t == "-h" || t == "--help":
			break options
		case gitQueries[long] && !(long == "--exec-path" && hasVal):
			return fields // git prints and exits
		case long == "--exec-path":
			config = true
			i++
		case gitValued[t]:
			if i+1 >= len(fields) {
				return fields // git exits: the option needs a value
			}
			config = config || t == "-c" || t == "--config-env"
			i += 2
		case strings.HasPrefix(t, "--") && hasVal && gitValued[long]:
			config = config || long == "--config-env"
			i++
		default:
			return fields // git: unknown option, nothing runs
		}
	}
	out := append([]field{fields[0]}, fields[i:]...)
	if len(out) < 2 {
		return out
	}
	sub := &out[1]
	switch sub.text {
	case "-v", "--version":
		*sub = field{text: "version"}
	case "-h", "--help":
		*sub = field{text: "help"}
	}
	if config || !gitCommands[sub.text] {
		sub.dynamic = true // an alias, or configured to run something else
	}
	return out
}

// gitConfigVar reports whether name is a variable that changes git's
// configuration or exec path.
func gitConfigVar(name string) bool {
	return strings.HasPrefix(name, "GIT_CONFIG") || name == "GIT_EXEC_PATH"
}

// dashedGit returns the vector git runs for a dashed program name (git-push,
// as in /usr/lib/git-core/git-push, is git's builtin push), or nil.
func dashedGit(prog string, args []field) []field {
	sub, ok := strings.CutPrefix(prog, "git-")
	if !ok || sub == "" {
		return nil
	}
	return append([]field{{text: "git"}, {text: sub}}, args...)
}

// finishGit marks the subcommand of every git command computed at run time
// when the line sets a variable that changes git's configuration.
func (a *analyzer) finishGit() {
	if a.git.config == "" {
		return
	}
	for i, c := range a.res.Commands {
		if len(c.Args) < 2 || !strings.EqualFold(c.Program(), "git") {
			continue
		}
		a.res.dynamic[i][1] = true
		a.res.Commands[i].Dynamic = a.res.dynamic[i]
	}
}
