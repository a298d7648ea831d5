package audit

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzScan: any input, in any form, reads to a summary or an error,
// within the bounds: never more watches than the bound, never more than
// MaxSkippedKept skipped records kept, each event a watch request at a
// line of the log. Seeded with every fixture.
func FuzzScan(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json*"))
	tail, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	for _, p := range append(files, tail...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(line("a", "ResponseStarted", "watch", "u", "/api/v1/pods?watch=true", "10.0.0.1", "ua")))
	f.Add([]byte("{\"kind\":\"Event\",\"apiVersion\":\"audit.k8s.io/v1\",\"verb\":\"watch\",\"requestURI\":\"%zz\"}\n"))
	f.Add([]byte{0x1f, 0x8b, 0, 0})
	f.Add([]byte(`{"records":[{"properties":{"log":"{\"kind\":\"Event\"}"}}],"events":[[[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		lim := Limits{Bytes: 1 << 16, Line: 1 << 10, Watches: 64, Records: 1 << 12}
		n := 0
		s, err := Scan(context.Background(), bytes.NewReader(b), "fuzz", lim, func(e *Event) error {
			n++
			if e.Verb != "watch" || e.Line < 1 || e.TimeoutSeconds < 0 || e.Code != 0 && (e.Code < 100 || e.Code > 599) {
				t.Fatalf("event %+v", e)
			}
			return nil
		})
		var u *UnknownFormatError
		if err != nil && !errors.As(err, &u) {
			return
		}
		if s == nil {
			t.Fatal("no summary")
		}
		if n > lim.Watches || n != s.Watches || len(s.Skipped) > MaxSkippedKept || s.SkippedCount < len(s.Skipped) {
			t.Fatalf("%d events (summary %d), %d skipped kept of %d", n, s.Watches, len(s.Skipped), s.SkippedCount)
		}
		if err != nil && s.Format != "" {
			t.Fatalf("format %q with error %v", s.Format, err)
		}
		// Detect names the form a whole read recognised, and calls a
		// log unknown when the whole read does; a filter that refuses
		// every request passes none on and counts them all.
		format, derr := Detect(context.Background(), bytes.NewReader(b), "fuzz", lim)
		if format != s.Format || errors.As(derr, &u) != (err != nil) {
			t.Fatalf("Detect = %q, %v; the whole read %q, %v", format, derr, s.Format, err)
		}
		fs, ferr := ScanFilter(context.Background(), bytes.NewReader(b), "fuzz", lim, func(*Event) bool { return false }, func(e *Event) error {
			t.Fatalf("refused event %+v passed on", e)
			return nil
		})
		if (ferr == nil) != (err == nil) || fs.Watches != s.Watches {
			t.Fatalf("filtered read: %d watches, %v; whole read %d, %v", fs.Watches, ferr, s.Watches, err)
		}
	})
}

// FuzzMembers: the JSON walker never panics, and what it accepts
// encoding/json reads as an object too.
func FuzzMembers(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":"c\"d"}],"e":null}`))
	f.Add([]byte(`{"a":NaN}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = members(b, func(k, v []byte) bool {
			unquote(nil, v)
			return true
		})
	})
}
