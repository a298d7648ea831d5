package probe

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
)

// WaitInitialEventsSenders polls the server's debug=2 goroutine dump every
// 250 ms, for at most timeout, until exactly n initial-events senders
// (watchers blocked in sendWatchCacheEvent under processInterval) show.
func WaitInitialEventsSenders(ctx context.Context, c rest.Interface, n int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		dump, err := GoroutineDump(ctx, c)
		if err != nil {
			return false, nil
		}
		gs, err := ParseGoroutines(dump)
		return err == nil && len(InitialEventsSenders(gs)) == n, nil
	})
}
