package diagnosis

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// FuzzDiagnoseTrace decides whatever the trace route keeps of cuts and
// mutations of the real seed trace: it must not panic, and a server
// decided from its trace says so in its dump format.
func FuzzDiagnoseTrace(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "trace-seed", "bundle", "127.0.0.1", "trace.out"))
	if err != nil {
		f.Fatal(err)
	}
	for _, n := range []int{16, 4 << 10, 64 << 10, 256 << 10} {
		f.Add(data[:n])
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		tr, _ := watches.ReadTrace(bytes.NewReader(in), watches.TraceOptions{Source: "fuzz", MaxBytes: 1 << 20})
		if tr == nil {
			return
		}
		r := Diagnose([]watches.Server{{Name: "fuzz", Trace: tr}}, Options{})
		if len(r.APIServers) != 1 {
			t.Fatalf("servers = %+v, want the one given", r.APIServers)
		}
		if got := r.APIServers[0].DumpFormat; got != FormatTrace && got != "" {
			t.Fatalf("dump format %q of a server given a trace alone", got)
		}
		for _, f := range r.Findings {
			if f.Severity.Rank() == api.Severity("").Rank() {
				t.Fatalf("finding without a severity: %+v", f)
			}
		}
	})
}

// A finding that may be any of a verdict's goroutines lists them up to
// maxCandidatesListed and counts the rest: each of n open watches costs
// O(1) lines, not O(n).
func TestTraceFindingListsAtMostTen(t *testing.T) {
	tf := traceFindings{server: "s", t: &watches.Trace{Source: "trace.out"}}
	for _, tc := range []struct {
		n     int
		lines int
		first string
	}{
		{3, 2 + 3, "one of the 3 goroutines below: which one serves this request, a trace cannot tell (it has no arguments and no parents)"},
		{2000, 2 + maxCandidatesListed, "one of 2000 goroutines, the first 10 below: which one serves this request, a trace cannot tell (it has no arguments and no parents)"},
	} {
		gs := make([]watches.TraceGoroutine, tc.n)
		for i := range gs {
			gs[i].ID = int64(100 + i)
			gs[i].Phase = api.PhaseInitial
		}
		f := tf.finding(verdictStuck, gs)
		if len(f.Evidence) != tc.lines || f.Evidence[1] != tc.first {
			t.Errorf("%d goroutines: %d evidence lines, the second %q; want %d, %q", tc.n, len(f.Evidence), f.Evidence[1], tc.lines, tc.first)
		}
	}
}
