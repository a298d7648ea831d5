package live

import (
	"context"
	"errors"
	"fmt"
)

// sampleEnd is how a sample's progress line ends: "done (N errors)", or,
// once ctx ended, how many requests the interrupt cut short, so that it
// agrees with the summary the caller prints (Result.Counts).
func sampleEnd(ctx context.Context, errs []error) string {
	if ctx.Err() == nil {
		return fmt.Sprintf("done (%d errors)", len(errs))
	}
	failed, cut := countErrors(errs)
	return fmt.Sprintf("interrupted (%d request(s) cut short, %d failed)", cut, failed)
}

// countErrors splits errs into failures and requests cut short by a
// cancellation.
func countErrors(errs []error) (failed, cut int) {
	for _, err := range errs {
		if errors.Is(err, context.Canceled) {
			cut++
		} else {
			failed++
		}
	}
	return failed, cut
}
