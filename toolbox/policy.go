package toolbox

import (
	"context"
	"fmt"

	"github.com/paigasus/helikon"
)

// AskUnlessReadOnly is the policy of helikon's CLI, and [New]'s default:
// read-only calls run, every other call is asked about (the approval
// handler answers; without one it is denied). Rules and the mode come
// first in the pipeline: AcceptEdits has already let writes through and
// Bypass everything, and an allow rule permits what it matches.
type AskUnlessReadOnly struct {
	// Reason, when set, says why a call is asked about (and what would
	// permit it without asking); nil says it in the library's terms.
	Reason func(c *helikon.Call) string
}

var _ helikon.Policy = AskUnlessReadOnly{}

// Decide implements [helikon.Policy].
func (p AskUnlessReadOnly) Decide(_ context.Context, c *helikon.Call, _ *helikon.Targets) (helikon.PolicyDecision, error) {
	if c.Effect == helikon.EffectReadOnly {
		return helikon.PolicyAllow(), nil
	}
	if p.Reason != nil {
		return helikon.PolicyAsk(p.Reason(c)), nil
	}
	if c.Effect == helikon.EffectWrite {
		return helikon.PolicyAsk(fmt.Sprintf("%s changes files; the accept-edits mode approves such calls, an allow rule for %s permits it", c.Tool, c.Tool)), nil
	}
	return helikon.PolicyAsk(fmt.Sprintf("%s has effect %s, which no mode but bypass approves; an allow rule for %s (or a narrower one) permits it", c.Tool, c.Effect, c.Tool)), nil
}
