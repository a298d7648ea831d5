package bundle

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/diagnosis"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/report"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func TestIsTraceHeader(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"go 1.26 trace\x00\x00\x00", true},
		{"go 1.22 trace\x00\x00\x00\x01", true},
		{"go 1.21 trace\x00\x00\x00", true}, // recognised; the reader refuses it with its version
		{"go 1.26 traces", false},
		{"go 1. trace\x00", false},
		{"go 1.2600 trace\x00", false},
		{"goroutine 1 [running]:", false},
		{"go 1.26", false},
	}
	for _, tt := range tests {
		if got := isTraceHeader([]byte(tt.in)); got != tt.want {
			t.Errorf("isTraceHeader(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// traceSeed is the shipped capture of testdata/kube-apiserver-v1.37.2/trace-seed.
func traceSeed(parts ...string) string {
	return filepath.Join(append([]string{"..", "..", "testdata", "kube-apiserver-v1.37.2", "trace-seed"}, parts...)...)
}

// seedVerdict is one finding of the seed capture as the tests compare it:
// its goroutines, type and who it names.
type seedVerdict struct {
	IDs        []int64
	Type       api.FindingType
	User       string
	Match      api.Match
	Candidates []string
}

func seedVerdicts(r *api.Report) []seedVerdict {
	var out []seedVerdict
	for _, f := range r.Findings {
		v := seedVerdict{IDs: f.GoroutineIDs, Type: f.Type, Candidates: f.CandidateUsers()}
		if f.Client != nil {
			v.User, v.Match = f.Client.User, f.Client.Match
		}
		slices.Sort(v.Candidates)
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b seedVerdict) int { return cmp.Compare(a.IDs[0], b.IDs[0]) })
	return out
}

// diagnoseLoaded diagnoses what Load read, failing on a load error.
func diagnoseLoaded(t *testing.T, paths ...string) (*Loaded, *api.Report) {
	t.Helper()
	l, err := Load(paths, Options{})
	if err != nil {
		t.Fatalf("Load(%q): %v", paths, err)
	}
	return l, diagnosis.Diagnose(l.Servers(), diagnosis.Options{})
}

// The seed capture's ground truth (testdata README): goroutine 35799 is
// slow-informer's watcher, stuck; 38014 paced-reader's, progressing. Both
// requests are pods, and pods' watch events grew, so elimination names
// each only as one of the two.
var seedWant = []seedVerdict{
	{IDs: []int64{35799}, Type: api.StuckInitialEvents, Match: api.MatchAmbiguous, Candidates: []string{"paced-reader", "slow-informer"}},
	{IDs: []int64{38014}, Type: api.SlowInitialEvents, Match: api.MatchAmbiguous, Candidates: []string{"paced-reader", "slow-informer"}},
}

func TestTraceSeedBundle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		paths []string
	}{
		{"bundle directory", []string{traceSeed("bundle")}},
		{"two sample directories and a trace file", []string{traceSeed("bundle", "127.0.0.1", "sample-1"), traceSeed("bundle", "127.0.0.1", "sample-2"), traceSeed("bundle", "127.0.0.1", "trace.out")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, r := diagnoseLoaded(t, tt.paths...)
			servers := l.Servers()
			if len(servers) != 1 || servers[0].Trace == nil || len(servers[0].Samples) != 2 {
				t.Fatalf("servers %d, want one with two samples and the trace", len(servers))
			}
			if diff := gocmp.Diff(seedWant, seedVerdicts(r)); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
			if len(r.Incomplete) != 0 {
				t.Errorf("incomplete %q: the trace decided every initial-phase watch", r.Incomplete)
			}
		})
	}
}

// The report of the seed bundle, as analyze prints it (table and JSON).
func TestTraceSeedGolden(t *testing.T) {
	t.Parallel()
	_, r := diagnoseLoaded(t, traceSeed("bundle"))
	for f, ext := range map[report.Format]string{report.FormatTable: "txt", report.FormatWide: "wide.txt", report.FormatJSON: "json"} {
		p, err := report.New(report.Options{Format: f})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := p.Print(&buf, r); err != nil {
			t.Fatal(err)
		}
		// The loader names the capture by its path: make it the same
		// wherever the test runs.
		got := bytes.ReplaceAll(buf.Bytes(), []byte(traceSeed()), []byte("trace-seed"))
		golden.Assert(t, "trace-seed."+ext, got)
	}
}

// On the same server, the debug=2 dumps alone call the stuck watcher slow
// (blocked under a minute in both samples); with the trace beside them it
// is stuck, and nothing the dumps decided is weakened.
func TestTraceSeedNeverWeakerThanDumps(t *testing.T) {
	t.Parallel()
	l, _ := diagnoseLoaded(t, traceSeed("bundle"))
	servers := l.Servers()
	for i := range servers[0].Samples {
		f, err := os.Open(traceSeed("debug2", fmt.Sprintf("sample-%d", i+1), "goroutine-debug2.txt.gz"))
		if err != nil {
			t.Fatal(err)
		}
		_, br, err := Open(f)
		if err == nil {
			servers[0].Samples[i].Dump, err = ReadDebug2(br)
		}
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	withTrace := diagnosis.Diagnose(servers, diagnosis.Options{})
	servers[0].Trace = nil
	dumpsAlone := diagnosis.Diagnose(servers, diagnosis.Options{})
	types := func(r *api.Report) map[int64]api.FindingType {
		m := map[int64]api.FindingType{}
		for _, f := range r.Findings {
			m[f.Watcher.GoroutineID] = f.Type
		}
		return m
	}
	wantAlone := map[int64]api.FindingType{35799: api.SlowInitialEvents, 38014: api.SlowInitialEvents}
	wantWith := map[int64]api.FindingType{35799: api.StuckInitialEvents, 38014: api.SlowInitialEvents}
	if diff := gocmp.Diff(wantAlone, types(dumpsAlone)); diff != "" {
		t.Errorf("debug=2 dumps alone (-want +got):\n%s", diff)
	}
	if diff := gocmp.Diff(wantWith, types(withTrace)); diff != "" {
		t.Errorf("debug=2 dumps and the trace (-want +got):\n%s", diff)
	}
	for i, f := range withTrace.Findings {
		if diff := gocmp.Diff(dumpsAlone.Findings[i].Client, f.Client); diff != "" {
			t.Errorf("finding %d: the trace changed the dumps' client match (-dumps +with trace):\n%s", i, diff)
		}
	}
}

// A trace cut short still gives what it proved, with a warning naming the
// cut; one the reader refuses is skipped while walking, an error when named.
func TestTraceSeedHostile(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(traceSeed("bundle", "127.0.0.1", "trace.out"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, s := range []string{"sample-1", "sample-2"} {
		copyDir(t, traceSeed("bundle", "127.0.0.1", s), filepath.Join(dir, "srv", s))
	}
	cut := filepath.Join(dir, "srv", "trace.out")
	if err := os.WriteFile(cut, data[:len(data)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	_, r := diagnoseLoaded(t, dir)
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "cut short") }) {
		t.Errorf("warnings %q, want the cut named", r.Warnings)
	}
	if len(r.Findings) == 0 {
		t.Errorf("no finding from the first half of the trace")
	}
	old := append([]byte("go 1.21 trace\x00\x00\x00"), data[16:]...)
	if err := os.WriteFile(cut, old, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Load([]string{dir}, Options{})
	if err != nil || !slices.ContainsFunc(l.Warnings, func(w string) bool { return strings.Contains(w, "not a Go 1.22 or later execution trace") }) {
		t.Errorf("walking a pre-1.22 trace: err %v, warnings %q; want it skipped with a warning", err, l.Warnings)
	}
	if _, err := Load([]string{cut}, Options{}); err == nil || !strings.Contains(err.Error(), "not a Go 1.22 or later execution trace") {
		t.Errorf("naming a pre-1.22 trace: err %v, want it refused", err)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o700); err != nil {
		t.Fatal(err)
	}
	es, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err == nil {
			err = os.WriteFile(filepath.Join(to, e.Name()), b, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
