package ossandbox

// arm64 has neither creat nor open: the attack uses openat.
const (
	sysCreat = -1
	sysOpen  = -1
)
