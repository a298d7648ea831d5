package audit

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/bounded"
)

// A log in none of the forms read is an error that names the forms and
// shows the first bytes, escaped (control characters, U+202E), never a
// run that goes on with nothing.
func TestUnknownFormat(t *testing.T) {
	tests := []struct {
		name, in, shows string
	}{
		{"text", "I0529 10:22:03.338 apiserver started\nhello\n", `"I0529 10:22:03.338 apiserver started\nhello\n"`},
		{"binary", "\x00\x01\x7fELF\x1b[2J", `"\x00\x01\x7fELF\x1b[2J"`},
		{"right-to-left override", "user\u202eevil\n", `"user\u202eevil\n"`},
		{"JSON of another kind", `{"apiVersion":"v1","kind":"ConfigMap"}` + "\n", `"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\"}\n"`},
		{"an array of numbers", "[1,2,3]", `"[1,2,3]"`},
		{"nested 10,000 deep", strings.Repeat("[", 10000) + strings.Repeat("]", 10000), `"` + strings.Repeat("[", firstBytes) + `"`},
		{"empty", "", `""`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(context.Background(), strings.NewReader(tc.in), "x.log", DefaultLimits)
			var u *UnknownFormatError
			if !errors.As(err, &u) {
				t.Fatalf("err %v, want an *UnknownFormatError", err)
			}
			msg := err.Error()
			for _, want := range []string{"x.log is in no audit log format read here", formatGKEArray, formatAKSRows, "it starts " + tc.shows} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if strings.ContainsAny(msg, "\x00\x1b\u202e") {
				t.Errorf("error %q holds unescaped bytes", msg)
			}
		})
	}
}

// A 16 MB file of "x" lines after one event: every line counted, 20
// kept, memory bounded by that (before, each kept its own record: 1 MB
// of them used 144 MB).
func TestSkippedLinesAreCountedNotKept(t *testing.T) {
	const n = 8 << 20 // "x\n" lines: 16 MiB
	in := io.MultiReader(strings.NewReader(line("a", "ResponseStarted", "watch", "u", "/api/v1/pods?watch=true", "10.0.0.1", "ua")),
		&repeatReader{unit: []byte("x\n"), n: n})
	s, err := Scan(context.Background(), in, "x.log", Limits{Bytes: 32 << 20, Line: 1 << 20, Watches: 10, Records: 10_000_000}, func(*Event) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if s.SkippedCount != n || len(s.Skipped) != MaxSkippedKept || s.Watches != 1 {
		t.Errorf("%d skipped, %d kept, %d watches: want %d, %d, 1", s.SkippedCount, len(s.Skipped), s.Watches, n, MaxSkippedKept)
	}
	if s.Skipped[MaxSkippedKept-1].Line != MaxSkippedKept+1 {
		t.Errorf("last kept at line %d, want %d", s.Skipped[MaxSkippedKept-1].Line, MaxSkippedKept+1)
	}
}

// repeatReader serves unit n times; n < 0 never ends.
type repeatReader struct {
	unit []byte
	n    int
	off  int
	// onRead, when set, runs before each Read.
	onRead func()
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.onRead != nil {
		r.onRead()
	}
	w := 0
	for w < len(p) {
		if r.n == 0 {
			if w == 0 {
				return 0, io.EOF
			}
			break
		}
		c := copy(p[w:], r.unit[r.off:])
		w += c
		if r.off += c; r.off == len(r.unit) {
			r.off = 0
			if r.n > 0 {
				r.n--
			}
		}
	}
	return w, nil
}

// Bounds: bytes after decompression (a gzip bomb), records, watches.
func TestBounds(t *testing.T) {
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	io.Copy(zw, &repeatReader{unit: bytes.Repeat([]byte{'\n'}, 4096), n: 64 << 8}) // 64 MiB of newlines
	zw.Close()
	ev := line("a", "ResponseStarted", "watch", "u", "/api/v1/pods?watch=true", "10.0.0.1", "ua")
	tests := []struct {
		name   string
		in     io.Reader
		limits Limits
		want   string
	}{
		{"gzip bomb", bytes.NewReader(bomb.Bytes()), Limits{Bytes: 1 << 20, Line: 4096, Watches: 10, Records: 1 << 30}, "bomb.gz holds more than 1 MiB, the most an audit log may hold"},
		{"records", &repeatReader{unit: []byte("x\n"), n: 1000}, Limits{Bytes: 1 << 20, Line: 4096, Watches: 10, Records: 999}, "bomb.gz: line 1000: more records than the bound (999)"},
		{"watches", strings.NewReader(ev + strings.Replace(ev, `"auditID":"a"`, `"auditID":"b"`, 1)), Limits{Bytes: 1 << 20, Line: 4096, Watches: 1, Records: 10}, "bomb.gz: line 2: more watch requests than the bound (1)"},
		{"watches in an array", strings.NewReader("[" + strings.TrimSpace(ev) + "," + strings.Replace(strings.TrimSpace(ev), `"auditID":"a"`, `"auditID":"b"`, 1) + "]"), Limits{Bytes: 1 << 20, Line: 4096, Watches: 1, Records: 10}, "bomb.gz: line 1: more watch requests than the bound (1)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Scan(context.Background(), tc.in, "bomb.gz", tc.limits, func(*Event) error { return nil })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
	var tl *bounded.TooLargeError
	if _, err := Scan(context.Background(), bytes.NewReader(bomb.Bytes()), "bomb.gz", Limits{Bytes: 1 << 20, Line: 4096, Watches: 10, Records: 1 << 30}, func(*Event) error { return nil }); !errors.As(err, &tl) {
		t.Errorf("err %v, want a *bounded.TooLargeError", err)
	}
}

// A cancelled context ends a read of a log that never ends, whatever it
// is made of, within checkEvery records or a MiB of one value: the
// reader counts what it served after the cancel.
func TestScanHonoursCancel(t *testing.T) {
	ev := line("a", "ResponseStarted", "watch", "u", "/api/v1/pods?watch=true", "10.0.0.1", "ua")
	tests := []struct {
		name  string
		unit  string
		start string
	}{
		{"lines", ev, ""},
		{"skipped lines", "x\n", ""},
		{"one endless line", "x", ""},
		{"array", strings.TrimSpace(ev) + ",", "["},
		{"one endless element", "1,", "[["},
		{"wrapper", strings.TrimSpace(ev) + ",", `{"records":[`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			reads, after := 0, 0
			r := &repeatReader{unit: []byte(tc.unit), n: -1}
			r.onRead = func() {
				if reads++; reads == 100 {
					cancel()
				}
				if ctx.Err() != nil {
					after++
				}
			}
			lim := Limits{Bytes: 1 << 40, Line: 1 << 20, Watches: 1 << 30, Records: 1 << 40}
			_, err := Scan(ctx, io.MultiReader(strings.NewReader(tc.start), r), "endless", lim, func(*Event) error { return nil })
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v, want context.Canceled", err)
			}
			// A read serves 64 KiB: checkEvery records or 1 MiB are
			// at most a few hundred reads.
			if after > 600 {
				t.Errorf("%d reads after the cancel", after)
			}
		})
	}
}

// Hostile values in a record read as far as they are valid: a huge or
// fractional timeoutSeconds is none, a status code that is not a small
// integer none, names with control characters and U+202E kept as given
// (the report escapes them), a value nested 10,000 deep walked without
// recursion.
func TestHostileValues(t *testing.T) {
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	in := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","auditID":"h1","stage":"ResponseComplete","verb":"watch","requestURI":"/api/v1/pods?timeoutSeconds=99999999999999999999\u0026watch=true","user":{"username":"evil\u001b[2J\u202e"},"sourceIPs":["999.1.1.1","not-an-ip"],"userAgent":"ua\u0000","responseStatus":{"code":1e400},"deep":` + deep + `,"requestReceivedTimestamp":"2026-02-31T10:00:00Z","stageTimestamp":"NaN"}` + "\n" +
		`{"kind":"Event","apiVersion":"audit.k8s.io/v1","auditID":"h2","verb":"watch","requestURI":"/api/v1/pods?timeoutSeconds=-5","responseStatus":{"code":NaN}}` + "\n" +
		`{"kind":"Event","apiVersion":"audit.k8s.io/v1","auditID":"h3","verb":"watch","requestURI":"/api/v1/pods?timeoutSeconds=1.5","user":{"username":"\ud800"}}` + "\n"
	got, err := Read(context.Background(), strings.NewReader(in), "h.log", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != 2 || got.SkippedCount != 1 {
		t.Fatalf("%d events, %d skipped (%v): want 2 and the NaN line skipped", len(got.Events), got.SkippedCount, got.Skipped)
	}
	e := got.Events[0]
	if e.TimeoutSeconds != 0 || e.Code != 0 || !e.RequestReceived.IsZero() || !e.Completed.IsZero() {
		t.Errorf("timeout %d, code %d, received %v, completed %v: want none of them", e.TimeoutSeconds, e.Code, e.RequestReceived, e.Completed)
	}
	if e.User != "evil\x1b[2J\u202e" || e.UserAgent != "ua\x00" || len(e.SourceIPs) != 2 {
		t.Errorf("user %q, user agent %q, addresses %q: want them as given", e.User, e.UserAgent, e.SourceIPs)
	}
	if got.Events[1].User != "\uFFFD" || got.Events[1].TimeoutSeconds != 0 {
		t.Errorf("a lone surrogate read as %q, timeout %d", got.Events[1].User, got.Events[1].TimeoutSeconds)
	}
}

// A document cut short keeps what it read and counts the cut; a line cut
// short is skipped.
func TestTruncated(t *testing.T) {
	ev := strings.TrimSpace(line("a", "ResponseStarted", "watch", "u", "/api/v1/pods?watch=true", "10.0.0.1", "ua"))
	for name, in := range map[string]string{
		"array":   "[\n" + ev + ",\n" + ev[:len(ev)/2],
		"wrapper": `{"records":[` + "\n" + `{"category":"kube-audit","properties":{"log":` + quote(ev) + `}},` + "\n" + `{"category":"kube-au`,
		"lines":   ev + "\n" + ev[:len(ev)/2],
	} {
		t.Run(name, func(t *testing.T) {
			got, err := Read(context.Background(), strings.NewReader(in), "cut.json", DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Events) != 1 || got.SkippedCount != 1 {
				t.Errorf("%d events, skipped %v: want 1 and the cut", len(got.Events), got.Skipped)
			}
		})
	}
}

func quote(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, c := range []byte(s) {
		if c == '"' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String()
}
