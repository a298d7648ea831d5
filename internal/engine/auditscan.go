package engine

import (
	"context"
	"io"

	"github.com/watch-doctor/watch-doctor/pkg/audit"
)

// auditSummary is what a scan of a log counted.
type auditSummary struct {
	Lines, Watches, SkippedCount int
	Skipped                      []audit.Skipped
}

// scanAudit reads one log, calling each for every watch request.
// TEMPORARY: until pkg/audit's Scan lands (branch i34audit).
func scanAudit(ctx context.Context, r io.Reader, name string, each func(*audit.Event) error) (*auditSummary, error) {
	l, err := audit.Read(r, name, audit.DefaultLimits)
	if err != nil {
		return nil, err
	}
	for i := range l.Events {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := each(&l.Events[i]); err != nil {
			return nil, err
		}
	}
	return &auditSummary{Lines: l.Lines, Watches: len(l.Events), SkippedCount: len(l.Skipped), Skipped: l.Skipped}, nil
}
