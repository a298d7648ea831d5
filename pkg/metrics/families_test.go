package metrics

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"
)

// familyTexts is every family of s in text exposition, by name: what
// two parses are compared by.
func familyTexts(t testing.TB, s *Sample) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range s.FamilyNames() {
		var b strings.Builder
		if _, err := expfmt.MetricFamilyToText(&b, s.Family(n)); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		out[n] = b.String()
	}
	return out
}

// TestFamiliesOfTheRealCapture: on the 2.3 MB capture of kube-apiserver
// v1.37.2, parsing some families gives each exactly as the whole parse
// does, and no other: all of them, every other one in name order (so a
// histogram and a summary whose names overlap are split), and the few the
// live path reads.
func TestFamiliesOfTheRealCapture(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(captures, "t1", "metrics.txt"))
	if err != nil {
		t.Fatal(err)
	}
	whole, err := Parse(bytes.NewReader(data), "t1")
	if err != nil {
		t.Fatal(err)
	}
	all := whole.FamilyNames()
	var even, odd []string
	for i, n := range all {
		if i%2 == 0 {
			even = append(even, n)
		} else {
			odd = append(odd, n)
		}
	}
	wholeTexts := familyTexts(t, whole)
	for name, want := range map[string][]string{
		"all": all, "even": even, "odd": odd,
		"look": {"go_goroutines", "process_start_time_seconds", "kubernetes_build_info", SchedPausesOther},
		"a histogram and the summary named after it": {"apiserver_admission_step_admission_duration_seconds", "apiserver_admission_step_admission_duration_seconds_summary"},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := Parser{Families: want}.Parse(bytes.NewReader(data), "t1")
			if err != nil {
				t.Fatal(err)
			}
			if s.Lines != whole.Lines || s.Bytes != whole.Bytes || len(s.Skipped) != 0 {
				t.Errorf("lines %d, bytes %d, skipped %v; want %d, %d, none", s.Lines, s.Bytes, s.Skipped, whole.Lines, whole.Bytes)
			}
			wantTexts := map[string]string{}
			for _, n := range want {
				wantTexts[n] = wholeTexts[n]
			}
			if diff := cmp.Diff(wantTexts, familyTexts(t, s)); diff != "" {
				t.Errorf("families (-whole parse +parse of %d families):\n%.3000s", len(want), diff)
			}
		})
	}
}

// TestFamiliesAsTheParserAssignsLines: each line goes to the family
// expfmt gives it: a histogram's or summary's parts to it, a same-named
// family declared before it to itself, UTF-8 names in either form, and
// comments to none. The families wanted come out as the whole parse
// gives them.
func TestFamiliesAsTheParserAssignsLines(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"histogram parts", "# HELP foo h\n# TYPE foo histogram\nfoo_bucket{le=\"1\"} 1\nfoo_bucket{le=\"+Inf\"} 2\nfoo_sum 3\nfoo_count 2\n# TYPE bar gauge\nbar 1\n", []string{"foo"}},
		{"summary parts", "# TYPE foo summary\nfoo{quantile=\"0.5\"} 1\nfoo_sum 3\nfoo_count 2\n# TYPE foo_bucket gauge\nfoo_bucket 7\n", []string{"foo"}},
		{"a _count family before the histogram", "# TYPE foo_count gauge\nfoo_count 9\n# TYPE foo histogram\nfoo_bucket{le=\"+Inf\"} 2\nfoo_sum 3\nfoo_count 2\n", []string{"foo"}},
		{"the _count family wanted", "# TYPE foo_count gauge\nfoo_count 9\n# TYPE foo histogram\nfoo_bucket{le=\"+Inf\"} 2\nfoo_sum 3\nfoo_count 2\n", []string{"foo_count"}},
		{"a counter's _count is its own", "# TYPE foo counter\nfoo 1\nfoo_count 4\n", []string{"foo_count"}},
		{"untyped, no comments", "foo 1\nfoo_sum 2\nbar 3\n", []string{"foo_sum"}},
		{"UTF-8 names", "# TYPE \"a.b\" gauge\n{\"a.b\", x=\"1\"} 1\n\"a.b\"{x=\"2\"} 2\n{\"a.b\"} 3\n# TYPE c gauge\nc 4\n", []string{"a.b"}},
		{"blanks, tabs and comments", "  # some comment\n#\tTYPE\tfoo gauge\n\t foo{a=\"1\"} 1\n# HELP foo\n", []string{"foo"}},
		{"one of many", "# TYPE a gauge\na 1\n# TYPE b counter\nb 2\n# TYPE c gauge\nc{x=\"y\"} 3\n", []string{"b", "c"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			whole, err := Parse(strings.NewReader(tc.text), "m")
			if err != nil {
				t.Fatal(err)
			}
			s, err := Parser{Families: tc.want}.Parse(strings.NewReader(tc.text), "m")
			if err != nil {
				t.Fatal(err)
			}
			wholeTexts, want := familyTexts(t, whole), map[string]string{}
			for _, n := range tc.want {
				want[n] = wholeTexts[n]
			}
			if diff := cmp.Diff(want, familyTexts(t, s)); diff != "" {
				t.Errorf("families (-whole parse +parse of %v):\n%s", tc.want, diff)
			}
		})
	}
}

// TestFamiliesBrokenOrAbsent: a syntax error in a wanted family is
// reported on the input's own line; an error in another family is not
// read; a family absent gives an empty sample, and an input that is no
// exposition fails as Parse fails.
func TestFamiliesBrokenOrAbsent(t *testing.T) {
	text := "# TYPE a gauge\na{x=\"1\"} 1\na{x=\"2 2\n# TYPE b gauge\nb{y=\"1\"} 1\nb{y=\"2\"} two\n# TYPE c gauge\nc 3\n"
	s, err := Parser{Families: []string{"a", "c"}}.Parse(strings.NewReader(text), "m")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "c"}, s.FamilyNames()); diff != "" {
		t.Errorf("families (-want +got):\n%s", diff)
	}
	whole, err := Parse(strings.NewReader(text), "m")
	if err != nil {
		t.Fatal(err)
	}
	// The whole parse skips line 3 (a's) and line 6 (b's).
	if len(whole.Skipped) != 2 || whole.Skipped[0].FromLine != 3 {
		t.Fatalf("whole parse skipped %v, want lines 3 and 6", whole.Skipped)
	}
	if diff := cmp.Diff(whole.Skipped[:1], s.Skipped); diff != "" {
		t.Errorf("skipped (-whole parse's of a +got):\n%s", diff)
	}
	if s.Lines != 8 {
		t.Errorf("lines = %d, want 8", s.Lines)
	}

	s, err = Parser{Families: []string{SchedPausesOther}}.Parse(strings.NewReader(text), "m")
	if err != nil || len(s.FamilyNames()) != 0 {
		t.Errorf("absent family: %v, %v; want an empty sample", s.FamilyNames(), err)
	}
	html := "<html><body>502 Bad Gateway</body></html>\n"
	_, want1 := Parse(strings.NewReader(html), "m")
	_, got1 := Parser{Families: []string{SchedPausesOther}}.Parse(strings.NewReader(html), "m")
	if want1 == nil || got1 == nil || got1.Error() != want1.Error() {
		t.Errorf("HTML: error %v, want %v", got1, want1)
	}
}

// FuzzParseFamilies: on any input the whole parse reads without a
// skipped line, parsing one of its families gives it exactly.
func FuzzParseFamilies(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "parse", "*.prom"))
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, 0)
		}
	}
	f.Add([]byte("# TYPE foo_count gauge\nfoo_count 9\n# TYPE foo histogram\nfoo_bucket{le=\"+Inf\"} 2\nfoo_sum 3\nfoo_count 2\n"), 1)
	f.Add([]byte("{\"a.b\", x=\"1\"} 1\n# TYPE s summary\ns_sum 1\ns_count 2\n"), 1)
	f.Fuzz(func(t *testing.T, data []byte, pick int) {
		whole, err := Parser{MaxBytes: 1 << 20}.Parse(bytes.NewReader(data), "fuzz")
		if err != nil || len(whole.Skipped) != 0 {
			return
		}
		names := whole.FamilyNames()
		n := names[uint(pick)%uint(len(names))]
		s, err := Parser{MaxBytes: 1 << 20, Families: []string{n}}.Parse(bytes.NewReader(data), "fuzz")
		if err != nil {
			t.Fatalf("family %q: %v", n, err)
		}
		want := map[string]string{n: familyTexts(t, whole)[n]}
		if diff := cmp.Diff(want, familyTexts(t, s)); diff != "" {
			t.Errorf("family %q (-whole parse +parse of it):\n%s", n, diff)
		}
	})
}
