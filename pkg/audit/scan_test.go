package audit

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

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
			_, err := Read(context.Background(), strings.NewReader(tc.in), "x.log", DefaultLimits())
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

// Detect names each fixture's form as a whole read does, reading no
// further than its first record (the rest of the log fails, unread); a
// log in no form is the same *UnknownFormatError as Scan's.
func TestDetect(t *testing.T) {
	for _, file := range []string{"upstream.jsonl", "eks-filter-log-events.json", "eks-logs-tail.txt", "aks-event-hub.json", "aks-log-analytics.json", "gke-gcloud-logging-read.json", "gke-log-sink.jsonl"} {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			whole, err := Read(context.Background(), bytes.NewReader(data), file, DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			// The log then fails: a whole read meets the failure, Detect
			// stops at the first record, before it.
			head := io.MultiReader(bytes.NewReader(data), iotest.ErrReader(errors.New("read past the log")))
			if _, err := Scan(context.Background(), io.MultiReader(bytes.NewReader(data), iotest.ErrReader(errors.New("read past the log"))), file, DefaultLimits(), func(*Event) error { return nil }); err == nil {
				t.Fatal("a whole read of the failing log did not fail")
			}
			got, err := Detect(context.Background(), head, file, DefaultLimits())
			if err != nil || got != whole.Format {
				t.Errorf("Detect = %q, %v; want %q", got, err, whole.Format)
			}
		})
	}
	var u *UnknownFormatError
	if _, err := Detect(context.Background(), strings.NewReader("hello\x00world\n"), "x.log", DefaultLimits()); !errors.As(err, &u) || string(u.First) != "hello\x00world\n" {
		t.Errorf("Detect of no form: %v, want an *UnknownFormatError showing its bytes", err)
	}
}

// TestInlineWrappers: wrappers one a line ({"records":[...]} on each
// line, as a capture of an event hub's messages may write them) read to
// the records of every line, in the wrapper's form, whether the first
// key is a wrapper's (read as a stream of objects) or not (read a line
// at a time); a line whose records are not an array is skipped, said,
// and the others still read (a null one is nothing to read).
func TestInlineWrappers(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("testdata", "aks-event-hub.json"))
	if err != nil {
		t.Fatal(err)
	}
	var hub struct{ Records []json.RawMessage }
	if err := json.Unmarshal(b, &hub); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i, r := range hub.Records {
		var c bytes.Buffer
		if err := json.Compact(&c, r); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, fmt.Sprintf(`{"partition":"%d","records":[%s]}`, i, c.String()))
	}
	whole, err := Read(context.Background(), bytes.NewReader(b), "hub.json", DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, log string
		skipped   []string
	}{
		{"records", strings.Join(lines, "\n") + "\n", nil},
		{"first key records, a bad line", strings.ReplaceAll(strings.Join(lines, "\n"), `{"partition":"`, `{"records":[],"partition":"`) + "\n" + `{"records":{"x":1},"events":null}` + "\n", []string{"records: not an array"}},
		{"events, a bad line", strings.ReplaceAll(strings.Join(lines, "\n"), `"records":[`, `"events":[`) + "\n" + `{"partition":"9","records":{"x":1}}` + "\n", []string{"records: not an array"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Read(context.Background(), strings.NewReader(tc.log), "hub.jsonl", DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			if got.Format != formatAKSRecords || got.Watches != whole.Watches || len(got.Events) != len(whole.Events) {
				t.Errorf("format %q, %d watches, %d events; want %q, %d, %d", got.Format, got.Watches, len(got.Events), formatAKSRecords, whole.Watches, len(whole.Events))
			}
			var reasons []string
			for _, sk := range got.Skipped {
				reasons = append(reasons, sk.Reason)
			}
			if diff := cmp.Diff(tc.skipped, reasons); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
		})
	}
}
