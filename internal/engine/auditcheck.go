package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/pkg/audit"
)

// CheckAuditLogs looks at the form of each audit log that has a head
// (bundle.AuditSource.Head) before a run reads it whole at its end: a
// log in no known form is an *AuditError now, before a live run's first
// sample, not after its sampling window. The look reads a log up to its
// first record (audit.Detect): a few KiB of a real log. A log whose head
// cannot decide is judged when read whole: an empty one (the server may
// write to it during the run), a head cut before its first record (a
// stream's first bundle.HeadBytes), a gzip stream that fails.
func CheckAuditLogs(ctx context.Context, sources []bundle.AuditSource) error {
	for _, src := range sources {
		if src.Head == nil {
			continue
		}
		if err := checkHead(ctx, src); err != nil {
			return err
		}
	}
	return nil
}

// checkHead is CheckAuditLogs of one log.
func checkHead(ctx context.Context, src bundle.AuditSource) error {
	rc, err := src.Head()
	if err != nil {
		return &AuditError{fmt.Errorf("%q: %w", src.Name, unwrapPath(err))}
	}
	defer rc.Close()
	_, err = audit.Detect(ctx, rc, src.Name, audit.DefaultLimits())
	var unknown *audit.UnknownFormatError
	if errors.As(err, &unknown) && len(unknown.First) > 0 {
		return &AuditError{err}
	}
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return nil
}
