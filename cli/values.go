package cli

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// sizeValue is a flag.Value for a size in bytes that takes the forms the
// help prints: a number of bytes (1073741824) or a number with a unit,
// with or without a space (1GiB, 1 GiB, 512M, 64k). Every unit is binary,
// as Docker's --memory and ulimit take them: k, K, KB and KiB are all 1024
// bytes, and so on up to T.
type sizeValue struct{ p *int64 }

var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
}

// errSize says what a size flag takes; flag prefixes it with the flag and
// the value.
var errSize = errors.New("a size is a number of bytes or a number with a unit: 1073741824, 1GiB, 512MiB, 64k")

// parseSize parses a size as the size flags take it (see --fsize in
// helikon exec --help): bytes, or a number with a binary unit.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	}
	mult, ok := sizeUnits[unit]
	if num == "" || !ok {
		return 0, errSize
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 || f*float64(mult) >= math.MaxInt64 {
		return 0, errSize
	}
	return int64(f * float64(mult)), nil
}

func (v sizeValue) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	*v.p = n
	return nil
}

func (v sizeValue) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.FormatInt(*v.p, 10)
}

// SizeVar defines a size flag (see [parseSize]) on fs.
func SizeVar(fs *flag.FlagSet, p *int64, name string, value int64, usage string) {
	*p = value
	fs.Var(sizeValue{p}, name, usage)
}

// durationValue is a flag.Value for a duration whose error says what a
// duration looks like: flag's own says only "parse error", and a bare
// number (--timeout 5) is the commonest slip.
type durationValue struct{ p *time.Duration }

func (v durationValue) Set(s string) error {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		if _, nerr := strconv.ParseFloat(strings.TrimSpace(s), 64); nerr == nil {
			return fmt.Errorf("a duration needs a unit: %ss or %sm, say", strings.TrimSpace(s), strings.TrimSpace(s))
		}
		return errors.New("a duration is a number with a unit: 30s, 2m, 1h30m")
	}
	if d < 0 {
		return errors.New("a duration cannot be negative")
	}
	*v.p = d
	return nil
}

func (v durationValue) String() string {
	if v.p == nil {
		return "0s"
	}
	return v.p.String()
}

// DurationVar defines a duration flag on fs whose errors say what a
// duration looks like.
func DurationVar(fs *flag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var(durationValue{p}, name, usage)
}
