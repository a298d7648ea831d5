package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/diagnosis"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/audit"
)

// maxSkippedShown bounds the skipped lines a note lists of one log.
const maxSkippedShown = 3

// auditKey is what the join matches a request by before its time: its
// user and path.
type auditKey struct{ user, path string }

// auditKeys are the users and paths of the watch requests of the APF
// dumps of the captures: the only requests an audit event can be joined
// to (a finding's client or candidate is one of them).
func auditKeys(l *bundle.Loaded) map[auditKey]bool {
	keys := map[auditKey]bool{}
	if l == nil {
		return keys
	}
	for _, c := range l.Captures {
		if c.Requests == nil {
			continue
		}
		for _, r := range c.Requests.Requests {
			user := r.User
			if user == "" {
				user = r.FlowDistinguisher
			}
			if user != "" && r.Path != "" {
				keys[auditKey{user, r.Path}] = true
			}
		}
	}
	return keys
}

// maxEarlyEnds bounds the watch requests readAudit keeps for having ended
// early in the captures' span, beside those of a key: the audit log's
// evidence of watches the server closed, whose client no APF dump may
// list (diagnosis.EndedEarly). The rest are counted in a note.
const maxEarlyEnds = 10000

// span is the time of a run's captures, widened by spanSlack at each end;
// zero when no capture has a time.
type span struct{ from, to time.Time }

// spanSlack widens a span for the clocks of the samples and the log.
const spanSlack = time.Minute

func (s span) holds(t time.Time) bool {
	return !s.from.IsZero() && !t.Before(s.from) && !t.After(s.to)
}

// captureSpan is the span of the captures of l: their dumps' and
// /metrics' times.
func captureSpan(l *bundle.Loaded) span {
	var s span
	if l == nil {
		return s
	}
	for _, c := range l.Captures {
		for _, t := range []time.Time{c.CapturedAt, c.MetricsAt} {
			if t.IsZero() {
				continue
			}
			if s.from.IsZero() || t.Before(s.from) {
				s.from = t
			}
			if t.After(s.to) {
				s.to = t
			}
		}
	}
	if !s.from.IsZero() {
		s.from, s.to = s.from.Add(-spanSlack), s.to.Add(spanSlack)
	}
	return s
}

// auditRead is what the audit logs of a run gave.
type auditRead struct {
	// events are the watch requests kept (of a key, or ended early in
	// the span), in the logs' order.
	events []audit.Event
	// watches counts the watch requests read, kept or not; keyed those
	// of a key, early and earlyDropped those kept and not kept for
	// having ended early.
	watches, keyed, early, earlyDropped int
	notes                               []string
}

// readAudit reads each audit log once, at the time of the call (a live
// run: after its last sample, so the requests made during the samples
// are in it), and keeps the watch requests of keys alone: memory is
// bounded by the evidence, not by the log. A log that cannot be opened,
// is past its bounds or in no known format is an error naming it; its
// skipped lines are a note. It also keeps, up to maxEarlyEnds, the watch
// requests that ended early in within, whoever made them: the closures'
// evidence (WatchClosedByServer) where no APF dump lists the client.
func readAudit(ctx context.Context, sources []bundle.AuditSource, keys map[auditKey]bool, within span) (*auditRead, error) {
	out := &auditRead{}
	for _, src := range sources {
		sum, err := scanSource(ctx, src, func(e *audit.Event) error {
			switch {
			case keys[auditKey{e.User, e.Path}]:
				out.events = append(out.events, *e)
				out.keyed++
			case within.holds(e.Completed) && diagnosis.EndedEarly(*e):
				if out.early == maxEarlyEnds {
					out.earlyDropped++
					return nil
				}
				out.events = append(out.events, *e)
				out.early++
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		out.watches += sum.Watches
		if sum.SkippedCount > 0 {
			out.notes = append(out.notes, skippedNote(src.Name, sum))
		}
		if len(sum.Lacks) > 0 {
			out.notes = append(out.notes, fmt.Sprintf("audit log %q (%s) lacks %s: the join rests on the user, the path and the time", src.Name, sum.Format, strings.Join(sum.Lacks, ", ")))
		}
	}
	if out.earlyDropped > 0 {
		out.notes = append(out.notes, fmt.Sprintf("audit log %s: %d more watch requests ended early in the run's window than the %d kept as evidence of closures: the rest are not read", names(sources), out.earlyDropped, maxEarlyEnds))
	}
	if len(sources) > 0 && out.keyed == 0 {
		out.notes = append(out.notes, fmt.Sprintf("audit log %s: %d watch requests read, none of a user and path of the APF dumps' watch requests: nothing to join (the log may be of another API server or period, or the dumps lack request details)", names(sources), out.watches))
	}
	return out, nil
}

// AuditError is an audit log that could not be read (not opened, past its
// bounds, in no known format): with Raw, what was fetched is kept all the
// same.
type AuditError struct{ Err error }

func (e *AuditError) Error() string { return "reading audit log: " + e.Err.Error() }
func (e *AuditError) Unwrap() error { return e.Err }

// scanSource opens src and scans it; the error names the log.
func scanSource(ctx context.Context, src bundle.AuditSource, each func(*audit.Event) error) (*audit.Summary, error) {
	rc, err := src.Open()
	if err != nil {
		return nil, &AuditError{fmt.Errorf("%q: %w", src.Name, unwrapPath(err))}
	}
	defer rc.Close()
	sum, err := audit.Scan(ctx, rc, src.Name, audit.DefaultLimits(), each)
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
	sum, err := scanSource(ctx, src, func(e *audit.Event) error {
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
	read, err := readAudit(ctx, cfg.AuditLogs, auditKeys(r.Loaded), captureSpan(r.Loaded))
	if err != nil {
		return err
	}
	cfg.Diagnosis.Audit = read.events
	r.Notes = append(r.Notes, read.notes...)
	return nil
}
