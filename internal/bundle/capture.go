package bundle

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// Capture is what was captured of one API server at one time: the files
// of one directory, the files named on the command line in one directory,
// or stdin.
type Capture struct {
	// Name is how messages refer to the capture: its directory as given.
	Name string
	// CapturedAt is when the goroutine dump was taken (zero: unknown) and
	// CapturedAtSource says where that came from.
	CapturedAt       time.Time
	CapturedAtSource string
	// Instance is the API server instance the capture was taken from: a
	// collect bundle's instance (and manifest, the path of the bundle's
	// manifest.json that listed the capture) or a live run's (NewCapture);
	// empty for files read alone.
	Instance string
	// Mixed says why the capture's inputs may come from different API
	// server processes; empty when they come from one.
	Mixed string
	// Withheld says what a debug=2 dump would have cost when it was not
	// taken for the pause budget (see Sample.Withheld).
	Withheld string
	// ProfileStatus is the status /debug/pprof refused the goroutine
	// profiles with (see Sample.ProfileStatus); 0 for none.
	ProfileStatus int
	manifest      string

	Dump     *watches.Dump
	Requests *apf.Requests
	Levels   []apf.PriorityLevel
	Metrics  *metrics.Snapshot
	// MetricsSample is the parsed /metrics the snapshot came from, for
	// callers that read families the watch model does not keep.
	MetricsSample *metrics.Sample
	// MetricsAt is when /metrics was read (the server's Date header, else
	// the fetch's start), from a collect bundle's manifest; zero otherwise.
	MetricsAt time.Time
	Version   string
	// Trace is the execution trace taken between this capture and the
	// next of its API server (collect's <instance>/trace.out), when one
	// was given.
	Trace *watches.Trace

	files    map[api.FileKind]string
	notes    []string
	warnings []string
	// foreign is set when the goroutine dump holds no kube-apiserver code.
	foreign bool
}

// Foreign reports whether the capture's goroutine dump holds no
// kube-apiserver code (k8s.io/apiserver frames): it may be from another
// process, and saying "no watch stuck" of it would be wrong.
func (c *Capture) Foreign() bool { return c.Dump != nil && c.foreign }

// Warnings are what reading the capture's inputs skipped.
func (c *Capture) Warnings() []string { return c.warnings }

// Files lists the capture's inputs by kind.
func (c *Capture) Files() map[api.FileKind]string { return c.files }

// NewCapture returns an empty capture of the given API server instance
// (empty for a capture read from files), for callers that fetch inputs
// themselves and hand them to Read.
func NewCapture(name, instance string, capturedAt time.Time, source string) *Capture {
	return &Capture{Name: name, Instance: instance, CapturedAt: capturedAt, CapturedAtSource: source, files: map[api.FileKind]string{}}
}

// Read parses one input of a known kind into c; name is used in errors
// and notes. r must yield the content uncompressed.
func (c *Capture) Read(kind api.FileKind, name string, r io.Reader) error {
	if prev, dup := c.files[kind]; dup {
		return fmt.Errorf("%s and %s are both %s in one capture: put captures in separate directories", prev, name, kind)
	}
	if isGoroutineKind(kind) {
		for k, prev := range c.files {
			if isGoroutineKind(k) {
				// Several forms of one dump (the fixture layout keeps all
				// three): debug=2 wins, as it alone carries ids and waits.
				if rank(kind) <= rank(k) {
					c.notes = append(c.notes, fmt.Sprintf("%s (%s) not used: %s (%s) is read instead", name, kind, prev, k))
					return nil
				}
				c.notes = append(c.notes, fmt.Sprintf("%s (%s) not used: %s (%s) is read instead", prev, k, name, kind))
				delete(c.files, k)
			}
		}
	}
	c.files[kind] = name
	wrap := func(err error) error {
		var le lineError
		if errors.As(err, &le) {
			return fmt.Errorf("%s:%d: %s", name, le.Line(), le.Reason())
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	switch kind {
	case api.FileGoroutineDebug2:
		d, err := ReadDebug2(r)
		if err != nil {
			return wrap(err)
		}
		c.Dump, c.foreign = d, !d.APIServer
	case api.FileGoroutineDebug1:
		_, d, err := watches.ReadProfile(r, watches.FormatDebug1)
		if err != nil {
			return wrap(err)
		}
		c.Dump, c.foreign = d, !d.APIServer
	case api.FileGoroutineProfile:
		_, d, err := watches.ReadProfile(r, watches.FormatProtobuf)
		if err != nil {
			delete(c.files, kind)
			return fmt.Errorf("%s: %w: binary data that is not a goroutine profile (%v)", name, ErrUnknownKind, err)
		}
		c.Dump, c.foreign = d, !d.APIServer
	case api.FileAPFRequests:
		rq, err := apf.ParseRequests(r)
		if err != nil {
			return wrap(err)
		}
		c.Requests = rq
	case api.FileAPFLevels:
		lv, skipped, err := apf.ParsePriorityLevels(r)
		if err != nil {
			return wrap(err)
		}
		c.Levels = lv
		if skipped.Count > 0 {
			c.warnings = append(c.warnings, fmt.Sprintf("%s: %d rows skipped (first at line %d: %s)", name, skipped.Count, skipped.First[0].Line, skipped.First[0].Reason))
		}
	case api.FileMetrics:
		s, err := metrics.Parse(r, name)
		if err != nil {
			return err
		}
		c.Metrics, c.MetricsSample = metrics.Extract(s), s
	case api.FileVersion:
		v, err := readVersion(r)
		if err != nil {
			return wrap(err)
		}
		c.Version = v
	case api.FileTrace:
		return c.readTrace(name, r)
	case api.FileCapturedAt:
		t, err := readCapturedAt(r)
		if err != nil {
			return wrap(err)
		}
		if c.CapturedAtSource == "" || c.CapturedAtSource == "captured-at" {
			c.CapturedAt, c.CapturedAtSource = t, "captured-at"
		}
	default:
		delete(c.files, kind)
		return fmt.Errorf("%s: cannot read inputs of kind %q", name, kind)
	}
	return nil
}

// lineError is the syntax error of every parser (stacks.SyntaxError,
// apf.SyntaxError, metrics.SyntaxError): the line it is about and the
// problem, which Read prefixes with the file's name as name:line.
type lineError interface {
	error
	Line() int
	Reason() string
}

// ReadDebug2 streams a debug=2 dump through the watch classifier
// (watches.ReadDump), keeping only what the diagnosis needs; a dump
// concatenated to another is refused there.
func ReadDebug2(r io.Reader) (*watches.Dump, error) {
	return watches.ReadDump(r, watches.ReadOptions{})
}

func readVersion(r io.Reader) (string, error) {
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(&v); err != nil {
		return "", fmt.Errorf("decoding /version: %w", err)
	}
	if v.GitVersion == "" {
		return "", errors.New("/version: field gitVersion is empty")
	}
	return v.GitVersion, nil
}

func readCapturedAt(r io.Reader) (time.Time, error) {
	b, err := io.ReadAll(io.LimitReader(bufio.NewReader(r), 256))
	if err != nil {
		return time.Time{}, err
	}
	s := strings.TrimSpace(string(b))
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, &stacks.SyntaxError{LineNo: 1, Msg: fmt.Sprintf("capture time %q is not RFC 3339 (like 2026-11-29T10:24:32Z)", s)}
	}
	return t, nil
}

// requestSlack is how long after a capture time an APF request may have
// started and still be read with that capture.
const requestSlack = 5 * time.Second

// foreignWarning is the warning for a capture whose dump is Foreign.
func foreignWarning(name string) string {
	return fmt.Sprintf("%s: the goroutine dump holds no kube-apiserver code (no k8s.io/apiserver frame), so no watch-cache goroutines were found: it may be from another process; capture kube-apiserver's /debug/pprof/goroutine?debug=2", name)
}

// dropLaterRequests removes the APF requests that started after the
// capture time (beyond requestSlack): a request that did not exist when the
// goroutine dump was taken cannot be one of its watches (an APF dump of
// another moment, t1's dump with t2's APF file). It returns a warning, or
// "" when nothing was dropped.
func (c *Capture) dropLaterRequests() string {
	if c.Requests == nil || c.CapturedAt.IsZero() {
		return ""
	}
	limit := c.CapturedAt.Add(requestSlack)
	var latest time.Time
	dropped := 0
	for _, r := range c.Requests.Requests {
		if r.StartTime.After(limit) {
			dropped++
			if r.StartTime.After(latest) {
				latest = r.StartTime
			}
		}
	}
	if dropped == 0 {
		// No copy of the rows when none is dropped: 50,000 of them are
		// 15 MB.
		return ""
	}
	kept := make([]apf.Request, 0, len(c.Requests.Requests)-dropped)
	for _, r := range c.Requests.Requests {
		if !r.StartTime.After(limit) {
			kept = append(kept, r)
		}
	}
	c.Requests.Requests = kept
	return fmt.Sprintf("%s: %d APF request(s) started after the capture time %s (up to %s after it; %s): they are not of the same moment as the goroutine dump and are not matched; give each capture its own APF dump",
		c.files[api.FileAPFRequests], dropped, c.CapturedAt.Format(time.RFC3339), latest.Sub(c.CapturedAt).Round(time.Second), c.CapturedAtSource)
}

// kubernetesEpoch is the day of Kubernetes' first commit: no kube-apiserver
// was captured before it.
var kubernetesEpoch = time.Date(2014, 6, 6, 0, 0, 0, 0, time.UTC)

// checkCaptureTime refuses a capture time no kube-apiserver capture can
// have: before Kubernetes existed, or after now (a clock an hour fast is
// allowed).
func (c *Capture) checkCaptureTime(now time.Time) error {
	if c.CapturedAt.IsZero() {
		return nil
	}
	where := c.CapturedAtSource
	if f, ok := c.files[api.FileCapturedAt]; ok && c.CapturedAtSource == "captured-at" {
		where = f + ":1"
	}
	ts := c.CapturedAt.Format(time.RFC3339Nano)
	if c.CapturedAt.Before(kubernetesEpoch) {
		return fmt.Errorf("%s: capture time %s is before Kubernetes existed (%s): fix the capture time", where, ts, kubernetesEpoch.Format("2006-01-02"))
	}
	if !now.IsZero() && c.CapturedAt.After(now.Add(time.Hour)) {
		return fmt.Errorf("%s: capture time %s is in the future (now %s): fix the capture time", where, ts, now.UTC().Format(time.RFC3339))
	}
	return nil
}
