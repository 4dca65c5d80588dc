package mcptools

import (
	"bytes"
	"encoding/json"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/internal/argcheck"
)

// checkArgs validates a call's arguments against a tool's input schema as a
// helikon function tool does (same words, every problem at once), so that a
// model sees the same message whichever side checks. Empty arguments and
// null mean {}. It returns the arguments to use.
func checkArgs(tool string, v *argcheck.Validator, args []byte) (json.RawMessage, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	if v.ValidRaw(args) {
		return args, nil
	}
	generic, problem := argcheck.ParseObject(args)
	if problem != "" {
		return nil, &helikon.InvalidArgsError{Tool: tool, Problems: []string{problem}}
	}
	if problems := v.Validate(generic); len(problems) > 0 {
		return nil, &helikon.InvalidArgsError{Tool: tool, Problems: problems}
	}
	return args, nil
}
