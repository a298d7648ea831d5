package metrics

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseFixtures(t *testing.T) {
	tests := []struct {
		file string
		// families and skipped describe a usable input; wantErr an unusable one.
		families []string
		series   int
		skipped  []string
		wantErr  string
	}{
		{
			file:     "valid.prom",
			families: []string{"apiserver_longrunning_requests", "go_goroutines"},
			series:   3,
		},
		{
			file:     "bad-line.prom",
			families: []string{"apiserver_longrunning_requests", "go_goroutines"},
			series:   2,
			skipped:  []string{`lines 4-5: unexpected end of label value "v1"; rest of the family skipped`},
		},
		{
			file:     "truncated.prom",
			families: []string{"go_goroutines"},
			series:   1,
			skipped:  []string{`line 4: no newline at end of input: last line "process_resident_memory_bytes 5.05" looks truncated`},
		},
		{
			file:     "untyped-bad-value.prom",
			families: []string{"go_goroutines", "process_start_time_seconds"},
			series:   2,
			skipped:  []string{`line 2: expected float as value, got "five"`},
		},
		{
			file:     "duplicate-series.prom",
			families: []string{"go_goroutines"},
			series:   1,
			skipped:  []string{`family "go_goroutines": 1 repeated series dropped (first kept)`},
		},
		{file: "empty.prom", wantErr: `"testdata/parse/empty.prom": no metric samples: the input is empty or only comments`},
		{file: "only-comments.prom", wantErr: `"testdata/parse/only-comments.prom": no metric samples: the input is empty or only comments`},
		{file: "json-status.prom", wantErr: `"testdata/parse/json-status.prom" line 1: unexpected end of metric name ':': the input is JSON (an API error Status?), not Prometheus text exposition`},
		{file: "html.prom", wantErr: `"testdata/parse/html.prom" line 1: invalid metric name: the input is HTML or XML (a proxy error page?), not Prometheus text exposition`},
		{file: "protobuf.bin", wantErr: `"testdata/parse/protobuf.bin" line 2: binary data (a NUL byte at byte 46): not Prometheus text exposition (a protobuf scrape? fetch /metrics with Accept: text/plain)`},
		{file: "invalid-utf8.prom", wantErr: `"testdata/parse/invalid-utf8.prom" line 1: invalid label value "p\xffods"`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.ToSlash(filepath.Join("testdata", "parse", tt.file))
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			s, err := Parse(f, path)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("Parse succeeded with families %v, want error %q", s.FamilyNames(), tt.wantErr)
				}
				if diff := cmp.Diff(tt.wantErr, err.Error()); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				var se *SyntaxError
				if !errors.As(err, &se) || se.Source != path {
					t.Errorf("error %v is not a *SyntaxError naming %q", err, path)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.families, s.FamilyNames()); diff != "" {
				t.Errorf("families (-want +got):\n%s", diff)
			}
			if s.Series() != tt.series {
				t.Errorf("series = %d, want %d", s.Series(), tt.series)
			}
			var skipped []string
			for _, sk := range s.Skipped {
				skipped = append(skipped, sk.String())
			}
			if diff := cmp.Diff(tt.skipped, skipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseGzip(t *testing.T) {
	plain, err := os.ReadFile(filepath.Join("testdata", "parse", "valid.prom"))
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(plain)
	zw.Close()
	s, err := Parse(&z, "valid.prom.gz")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"apiserver_longrunning_requests", "go_goroutines"}, s.FamilyNames()); diff != "" {
		t.Errorf("families (-want +got):\n%s", diff)
	}

	_, err = Parse(bytes.NewReader([]byte{0x1f, 0x8b, 0, 0}), "broken.gz")
	if err == nil || !strings.HasPrefix(err.Error(), `"broken.gz": gzip header: `) {
		t.Errorf("broken gzip: error = %v", err)
	}
}

func TestParseLimits(t *testing.T) {
	big := strings.Repeat("go_goroutines 1\n", 100)
	tests := []struct {
		name    string
		in      func() *bytes.Reader
		max     int
		wantErr string
		isLarge bool
	}{
		{
			name:    "over the limit",
			in:      func() *bytes.Reader { return bytes.NewReader([]byte(big)) },
			max:     1000,
			wantErr: `reading "big": input too large: more than 1000 bytes`,
			isLarge: true,
		},
		{
			name: "gzip bomb is measured decompressed",
			in: func() *bytes.Reader {
				var z bytes.Buffer
				zw := gzip.NewWriter(&z)
				zw.Write(bytes.Repeat([]byte("# padding\n"), 10000))
				zw.Close()
				return bytes.NewReader(z.Bytes())
			},
			max:     10000,
			wantErr: `reading "big": input too large: more than 10000 bytes`,
			isLarge: true,
		},
		{
			name: "at the limit",
			in:   func() *bytes.Reader { return bytes.NewReader([]byte(big)) },
			max:  len(big),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parser{MaxBytes: tt.max}.Parse(tt.in(), "big")
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
			if errors.Is(err, ErrTooLarge) != tt.isLarge {
				t.Errorf("errors.Is(err, ErrTooLarge) = %v", !tt.isLarge)
			}
		})
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestParseReadError(t *testing.T) {
	_, err := Parse(failingReader{}, "https://10.0.0.1:6443/metrics")
	if want := `reading "https://10.0.0.1:6443/metrics": connection reset`; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

// TestParseCaptures parses the real captures cleanly.
func TestParseCaptures(t *testing.T) {
	for _, which := range []string{"t1", "t2"} {
		t.Run(which, func(t *testing.T) {
			s := parseCapture(t, which)
			if len(s.Skipped) != 0 {
				t.Errorf("skipped: %v", s.Skipped)
			}
			if len(s.FamilyNames()) < 200 || s.Lines < 18000 {
				t.Errorf("%d families in %d lines: want the whole file", len(s.FamilyNames()), s.Lines)
			}
		})
	}
}

// TestParseResync checks that after a bad line in one family the next
// families are still read, also when the same family name shows up again.
func TestParseResync(t *testing.T) {
	in := strings.Join([]string{
		"# TYPE a counter",
		"a{x=\"1\"} 1",
		"a{x=\"2\" 2",  // bad
		"a{x=\"3\"} 3", // skipped with the rest of a
		"# TYPE b gauge",
		"b 5",
		"# TYPE a gauge", // a again, with another type
		"a{x=\"4\"} 4",
		"",
	}, "\n")
	s, err := Parse(strings.NewReader(in), "resync")
	if err != nil {
		t.Fatal(err)
	}
	var skipped []string
	for _, sk := range s.Skipped {
		skipped = append(skipped, sk.String())
	}
	want := []string{
		`lines 3-4: unexpected end of label value "2"; rest of the family skipped`,
		`line 5: family "a" appears again as gauge after counter: 1 series dropped`,
	}
	if diff := cmp.Diff(want, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if got := len(s.Family("a").GetMetric()); got != 1 {
		t.Errorf("a has %d series, want 1", got)
	}
	if s.Family("b") == nil {
		t.Error("b lost after the bad line")
	}
}

// TestParseManyErrors: hostile input with a syntax error on every line is
// refused quickly; a few hundred bad lines still leave the good ones usable.
func TestParseManyErrors(t *testing.T) {
	tests := []struct {
		name     string
		badLines int
		wantErr  bool
		wantLast string
	}{
		{name: "few", badLines: 500, wantLast: `line 500: invalid label name for metric "a"`},
		{name: "too many", badLines: 100000, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := strings.Repeat("a{\n", tt.badLines) + "b 1\n"
			start := time.Now()
			s, err := Parse(strings.NewReader(in), "hostile")
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Parse took %v", d)
			}
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Parse succeeded, skipped %d", len(s.Skipped))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Skipped[len(s.Skipped)-1].String(); got != tt.wantLast {
				t.Errorf("last skip = %q, want %q", got, tt.wantLast)
			}
			if s.Family("b") == nil {
				t.Error("the good line after the bad ones was lost")
			}
		})
	}
}
