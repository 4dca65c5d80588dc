package filetool

import (
	"strings"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/model"
)

// TestEditMismatchIsOtherNotDeniedNorInvalidArgs pins the decision recorded
// in docs/seed-mapping.md: an old_string that is not found or not unique is
// a recoverable miss the model repairs by reading the file again, so it is
// kind other. Not invalid_args: that kind spends the agent's repair budget
// (one retry by default), and a model often needs more than one try to
// quote a file exactly. Not denied: that kind tells the model not to retry
// and the CLI reports it as a policy refusal (exit 3).
func TestEditMismatchIsOtherNotDeniedNorInvalidArgs(t *testing.T) {
	for name, e := range map[string]error{"not found": errNotFound, "not unique": errNotUnique} {
		err := editError(EditArgs{Path: "a.txt", OldString: "x"}, 2, 1<<20, e)
		if kind := helikon.KindOf(err); kind != helikon.KindOther {
			t.Errorf("%s: kind %s, want other", name, kind)
		}
		res := model.ToolResultFor(model.ToolCall{Name: "Edit"}, nil, err)
		if strings.Contains(res.Content, "Do not retry") || !strings.Contains(res.Content, "a.txt") {
			t.Errorf("%s: the model reads %q", name, res.Content)
		}
	}
}
