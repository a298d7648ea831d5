package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/diagnosis"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/audit"
)

// maxSkippedShown bounds the skipped lines a note lists of one log.
const maxSkippedShown = 3

// auditNeed records the watch requests of the APF dumps of the captures
// (their users, paths and starts) and the captures' times: what an audit
// event can be joined to (a finding's client or candidate is one of
// them), or tie a closure in.
func auditNeed(l *bundle.Loaded) *diagnosis.AuditNeed {
	need := diagnosis.NewAuditNeed()
	if l == nil {
		return need
	}
	for _, c := range l.Captures {
		need.Sample(c.CapturedAt)
		need.Sample(c.MetricsAt)
		if c.Requests == nil {
			continue
		}
		for _, r := range c.Requests.Requests {
			user := r.User
			if user == "" {
				user = r.FlowDistinguisher
			}
			need.Request(user, r.Path, r.StartTime)
		}
	}
	return need
}

// auditRead is what the audit logs of a run gave.
type auditRead struct {
	// events are the watch requests kept, in the logs' order.
	events []audit.Event
	notes  []string
}

// readAudit reads each audit log once, at the time of the call (a live
// run: after its last sample, so the requests made during the samples
// are in it), and keeps the watch requests need admits alone: memory is
// bounded by the evidence, not by the log. A log that cannot be opened,
// is past its bounds or in no known format is an error naming it; its
// skipped lines are a note.
func readAudit(ctx context.Context, sources []bundle.AuditSource, need *diagnosis.AuditNeed) (*auditRead, error) {
	out := &auditRead{}
	total := 0
	keep := need.Filter()
	for _, src := range sources {
		sum, err := scanSource(ctx, src, keep, func(e *audit.Event) error {
			need.Add(e)
			return nil
		})
		if err != nil {
			return nil, err
		}
		total += sum.Watches
		if sum.SkippedCount > 0 {
			out.notes = append(out.notes, skippedNote(src.Name, sum))
		}
		if len(sum.Lacks) > 0 {
			out.notes = append(out.notes, fmt.Sprintf("audit log %q (%s) lacks %s: the join rests on the user, the path and the time", src.Name, sum.Format, strings.Join(sum.Lacks, ", ")))
		}
	}
	out.events = need.Events()
	out.notes = append(out.notes, need.Notes()...)
	switch {
	case len(sources) == 0 || len(out.events) > need.Early():
	case need.Read() == 0:
		out.notes = append(out.notes, fmt.Sprintf("audit log %s: %d watch requests read, none of a user and path of the APF dumps' watch requests: nothing to join (the log may be of another API server or period, or the dumps lack request details)", names(sources), total))
	default:
		out.notes = append(out.notes, fmt.Sprintf("audit log %s: %d watch requests read, %d of a user and path of the APF dumps' watch requests, none received within %s of their start there or ended early in the samples' window: nothing to join (the log may be of another period)", names(sources), total, need.Read(), diagnosis.AuditTolerance))
	}
	return out, nil
}

// AuditError is an audit log that could not be read (not opened, past its
// bounds, in no known format): with Raw, what was fetched is kept all the
// same.
type AuditError struct{ Err error }

func (e *AuditError) Error() string { return "reading audit log: " + e.Err.Error() }
func (e *AuditError) Unwrap() error { return e.Err }

// scanSource opens src and scans it, keeping the requests keep admits
// (all when nil); the error names the log.
func scanSource(ctx context.Context, src bundle.AuditSource, keep audit.Filter, each func(*audit.Event) error) (*audit.Summary, error) {
	rc, err := src.Open()
	if err != nil {
		return nil, &AuditError{fmt.Errorf("%q: %w", src.Name, unwrapPath(err))}
	}
	defer rc.Close()
	sum, err := audit.ScanFilter(ctx, rc, src.Name, audit.DefaultLimits(), keep, each)
	if err != nil {
		// Scan's errors name the log.
		return nil, &AuditError{err}
	}
	return sum, nil
}

// unwrapPath drops the *fs.PathError's own naming of the path: the error
// names the log already.
func unwrapPath(err error) error {
	var nr *bundle.NotRegularError
	if errors.As(err, &nr) {
		return errors.New(strings.TrimPrefix(nr.Error(), fmt.Sprintf("%q is ", nr.Path)))
	}
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

// skippedNote says how many lines of a log were skipped, and the first.
func skippedNote(name string, sum *audit.Summary) string {
	var first []string
	for i, s := range sum.Skipped {
		if i == maxSkippedShown {
			break
		}
		first = append(first, fmt.Sprintf("line %d: %s", s.Line, s.Reason))
	}
	return fmt.Sprintf("audit log %q (%s): %d of %d records skipped (%s)", name, sum.Format, sum.SkippedCount, sum.Records, strings.Join(first, "; "))
}

// names lists the logs' names, quoted.
func names(sources []bundle.AuditSource) string {
	q := make([]string, len(sources))
	for i, s := range sources {
		q[i] = fmt.Sprintf("%q", s.Name)
	}
	return strings.Join(q, ", ")
}

// AuditTarget is a Raw target that keeps audit logs (collect's bundle):
// StoreAudit writes the watch requests of the log name from body and
// returns where, as the manifest records it.
type AuditTarget interface {
	StoreAudit(name string, body io.Reader) (string, error)
}

// storeAudit reads each audit log once, at the end of the run, and
// streams its watch requests, rewritten as upstream JSON lines
// (audit.Write), to t: memory stays that of a batch, whatever the log.
func storeAudit(ctx context.Context, sources []bundle.AuditSource, t model.Target) ([]api.AuditLogCopy, error) {
	if len(sources) == 0 {
		return nil, nil
	}
	at, ok := t.(AuditTarget)
	if !ok {
		return nil, fmt.Errorf("audit logs given to a target that cannot keep them (%T)", t)
	}
	var out []api.AuditLogCopy
	for _, src := range sources {
		c, err := storeOne(ctx, src, at)
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

// errCopyFailed ends the reading of a log whose copy failed.
var errCopyFailed = errors.New("the bundle's copy of the log failed")

// storeBatch is how many events are written at once.
const storeBatch = 512

// storeOne copies the watch requests of src to at, streamed in batches.
// The copy starts with the first request: a log without any keeps no
// file (an empty file would be in no format), only its record.
func storeOne(ctx context.Context, src bundle.AuditSource, at AuditTarget) (api.AuditLogCopy, error) {
	type stored struct {
		file string
		err  error
	}
	var pw *io.PipeWriter
	var done chan stored
	var batch []audit.Event
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if pw == nil {
			var pr *io.PipeReader
			pr, pw = io.Pipe()
			done = make(chan stored, 1)
			go func() {
				file, err := at.StoreAudit(src.Name, pr)
				pr.CloseWithError(errCopyFailed)
				done <- stored{file, err}
			}()
		}
		err := audit.Write(pw, batch)
		batch = batch[:0]
		return err
	}
	sum, err := scanSource(ctx, src, nil, func(e *audit.Event) error {
		if batch = append(batch, *e); len(batch) == storeBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if pw == nil {
		if err != nil {
			return api.AuditLogCopy{}, err
		}
		return api.AuditLogCopy{Source: src.Name, Watches: sum.Watches, Lines: sum.Lines}, nil
	}
	pw.CloseWithError(err)
	st := <-done
	return storedCopy(src.Name, sum, err, st.file, st.err)
}

// storedCopy is the manifest's record of a log whose watch requests were
// stored as file: the read's error first, unless it is only the store's
// failure seen from the reading side.
func storedCopy(name string, sum *audit.Summary, readErr error, file string, storeErr error) (api.AuditLogCopy, error) {
	switch {
	case readErr != nil && !errors.Is(readErr, errCopyFailed):
		return api.AuditLogCopy{}, readErr
	case storeErr != nil:
		return api.AuditLogCopy{}, storeErr
	case readErr != nil:
		return api.AuditLogCopy{}, readErr
	}
	return api.AuditLogCopy{Source: name, File: file, Watches: sum.Watches, Lines: sum.Lines}, nil
}

// readAudit reads the run's audit logs into the diagnosis' options,
// their notes into the run's.
func (r *Result) readAudit(ctx context.Context, cfg *Config) error {
	if len(cfg.AuditLogs) == 0 {
		return nil
	}
	read, err := readAudit(ctx, cfg.AuditLogs, auditNeed(r.Loaded))
	if err != nil {
		return err
	}
	cfg.Diagnosis.Audit = read.events
	r.Notes = append(r.Notes, read.notes...)
	return nil
}
