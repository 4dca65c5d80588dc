package ossandbox

import "github.com/paigasus/helikon/backend"

// tighten applies a request's limits to the backend's (defaults already
// applied): a request may lower a limit or set one the backend leaves
// unlimited, never raise or remove one.
func tighten(base backend.ResourceLimits, req *backend.ResourceLimits) backend.ResourceLimits {
	if req == nil {
		return base
	}
	pick := func(b, r int64) int64 {
		if r > 0 && (b <= 0 || r < b) {
			return r
		}
		return b
	}
	base.CPUSeconds = pick(base.CPUSeconds, req.CPUSeconds)
	base.FileSize = pick(base.FileSize, req.FileSize)
	base.AddressSpace = pick(base.AddressSpace, req.AddressSpace)
	base.OpenFiles = pick(base.OpenFiles, req.OpenFiles)
	base.Processes = pick(base.Processes, req.Processes)
	return base
}
