package ossandbox

import "errors"

// DefaultHomeSize is the cap of the session home ([Options].HomeSize).
const DefaultHomeSize = 4 << 30

// ErrHomeFull is wrapped by Run's error when the session home (or a named
// cache) holds more than its cap: no command runs until it is emptied or
// the cap raised.
var ErrHomeFull = errors.New("ossandbox: the session home is over its size cap")
