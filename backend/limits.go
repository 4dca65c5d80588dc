package backend

import "time"

// Defaults shared by the backends in this module.
const (
	// DefaultTimeout is how long a command may run when neither the backend
	// nor the request sets a timeout.
	DefaultTimeout = 30 * time.Second
	// DefaultOutputCap is the cap per captured stream: enough for a build
	// log or a long file listing, small enough to fit a model's context.
	DefaultOutputCap = 1 << 20
	// DefaultFileSize is the default RLIMIT_FSIZE: a command may write
	// files up to 1 GiB each.
	DefaultFileSize = 1 << 30
	// CPUSlack is added to the timeout to make the default RLIMIT_CPU: the
	// CPU limit is a backstop for a process that escapes the wall-clock
	// timeout, not the primary limit, so it must not fire first.
	CPUSlack = 5 * time.Second
)

// EffectiveTimeout returns the timeout a command runs with: the request's
// when it is positive and shorter than max, else max. A max of zero means
// [DefaultTimeout].
func EffectiveTimeout(max, requested time.Duration) time.Duration {
	if max <= 0 {
		max = DefaultTimeout
	}
	if requested > 0 && requested < max {
		return requested
	}
	return max
}

// Merge returns base with every non-zero field of override applied. A nil
// override returns base.
func (base ResourceLimits) Merge(override *ResourceLimits) ResourceLimits {
	if override == nil {
		return base
	}
	set := func(dst *int64, v int64) {
		if v != 0 {
			*dst = v
		}
	}
	set(&base.CPUSeconds, override.CPUSeconds)
	set(&base.FileSize, override.FileSize)
	set(&base.AddressSpace, override.AddressSpace)
	set(&base.OpenFiles, override.OpenFiles)
	set(&base.Processes, override.Processes)
	return base
}

// WithDefaults fills the zero fields of l with the defaults for a command
// running with timeout: CPU seconds = timeout + [CPUSlack] rounded up, file
// size [DefaultFileSize]. Address space, open files and processes have no
// default limit. Negative fields (explicitly unlimited) are kept.
func (l ResourceLimits) WithDefaults(timeout time.Duration) ResourceLimits {
	if l.CPUSeconds == 0 {
		l.CPUSeconds = int64((timeout + CPUSlack + time.Second - 1) / time.Second)
	}
	if l.FileSize == 0 {
		l.FileSize = DefaultFileSize
	}
	return l
}
