package execfs

import (
	"context"
	"strings"
)

// scriptWalk runs walk alone. Payload: ex, nd and the resolved path.
const scriptWalk = `walk "$3"
printf '%s %s %s' "$ex" "$nd" "$d"
reply
`

// RealPathForTest is what the scripts resolve name to, in the terms of
// fsroot.FS.RealPath: the path relative to the root, "." for the
// root, or the error the walk stopped with.
func (f *FS) RealPathForTest(ctx context.Context, name string) (string, error) {
	rel, err := f.rel(name)
	if err != nil {
		return "", err
	}
	if f.scripts["walk"] == "" {
		f.scripts["walk"] = prelude + scriptWalk
	}
	out, err := f.run(ctx, "walk", []string{rel}, nil, replySlack)
	if err != nil {
		return "", err
	}
	fields := strings.SplitN(string(out), " ", 3)
	if fields[2] == "" {
		return ".", nil
	}
	return fields[2], nil
}
