package watches

import (
	"strings"

	"github.com/watch-doctor/watch-doctor/pkg/trace"
)

// CacheWaitFunc names the cacher function a TraceCacheWait goroutine's
// stack waits in ("(*ready).wait", "(*ready).waitAndReadGeneration",
// "(*watchCache).waitUntilFreshLocked"), or "the cacher" when its stack
// shows none of them.
func CacheWaitFunc(stack []trace.Frame) string {
	for _, f := range stack {
		if r := roleOf(f.Func); r == roleReadyWait || r == roleWaitFresh {
			name := CanonicalFunc(f.Func)
			return name[strings.LastIndexByte(name, '/')+1:]
		}
	}
	return "the cacher"
}
