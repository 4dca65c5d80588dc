package mcptools

import (
	"bytes"
	"encoding/json"
	"fmt"

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
	var generic any
	if err := json.Unmarshal(args, &generic); err != nil {
		return nil, &helikon.InvalidArgsError{Tool: tool, Problems: []string{"the arguments are not valid JSON: " + err.Error() + "; send one JSON object"}}
	}
	if _, ok := generic.(map[string]any); !ok {
		return nil, &helikon.InvalidArgsError{Tool: tool, Problems: []string{"the arguments must be a JSON object, got " + jsonKind(generic)}}
	}
	if problems := v.Validate(generic); len(problems) > 0 {
		return nil, &helikon.InvalidArgsError{Tool: tool, Problems: problems}
	}
	return args, nil
}

// jsonKind names the JSON type of a decoded value, with an article.
func jsonKind(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", x)
}
