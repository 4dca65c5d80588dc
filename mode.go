package helikon

import (
	"errors"
	"fmt"
	"strings"
)

// PermissionMode is the run-wide stance of the permission pipeline.
//
// A mode can be tightened during a run, never loosened; sub-agents share the
// mode of their parent. The order of restriction, loosest first, is
// Bypass, AcceptEdits, Default, Plan, DontAsk; Bypass may only become DontAsk
// (an operator who chose Bypass asked for no prompts, so the only tightening
// that keeps that promise is the headless lockdown), and DontAsk is final.
type PermissionMode int

const (
	// ModeDefault defers to the policy, and allows when there is none.
	ModeDefault PermissionMode = iota
	// ModeAcceptEdits auto-approves write-effect tools; everything else
	// goes to the policy as in ModeDefault.
	ModeAcceptEdits
	// ModePlan lets only read-only tools run (an allow rule still permits a
	// call explicitly).
	ModePlan
	// ModeDontAsk is the headless lockdown: only an allow rule permits a
	// call, and nothing is ever asked.
	ModeDontAsk
	// ModeBypass allows everything except what deny rules and guards stop.
	ModeBypass
)

var modeNames = [...]string{
	ModeDefault:     "default",
	ModeAcceptEdits: "accept-edits",
	ModePlan:        "plan",
	ModeDontAsk:     "dont-ask",
	ModeBypass:      "bypass",
}

// String returns the mode's name as the CLI spells it: default, accept-edits,
// plan, dont-ask or bypass.
func (m PermissionMode) String() string {
	if m >= 0 && int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("PermissionMode(%d)", int(m))
}

// ParseMode parses a mode name as returned by [PermissionMode.String]. It also
// accepts the camel-case spellings used elsewhere (acceptEdits, dontAsk,
// bypassPermissions).
func ParseMode(s string) (PermissionMode, error) {
	switch strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(s, "-", ""), "_", "")) {
	case "default", "":
		return ModeDefault, nil
	case "acceptedits":
		return ModeAcceptEdits, nil
	case "plan":
		return ModePlan, nil
	case "dontask":
		return ModeDontAsk, nil
	case "bypass", "bypasspermissions":
		return ModeBypass, nil
	}
	return 0, fmt.Errorf("unknown permission mode %q: use one of default, accept-edits, plan, dont-ask, bypass", s)
}

// ErrModeLoosen is wrapped by the error returned when a mode change would
// loosen the current mode.
var ErrModeLoosen = errors.New("a permission mode can only be tightened during a run")

// rank orders the modes that tighten linearly, loosest first.
var modeRank = map[PermissionMode]int{ModeAcceptEdits: 0, ModeDefault: 1, ModePlan: 2, ModeDontAsk: 3}

// CanBecome reports whether a run in mode m may switch to mode n: n must be
// the same mode or a tighter one.
func (m PermissionMode) CanBecome(n PermissionMode) bool {
	if m == n {
		return true
	}
	switch m {
	case ModeBypass:
		return n == ModeDontAsk
	case ModeDontAsk:
		return false
	}
	rm, ok1 := modeRank[m]
	rn, ok2 := modeRank[n]
	return ok1 && ok2 && rn > rm
}
