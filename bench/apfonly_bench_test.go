package bench

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/watch-doctor/watch-doctor/internal/benchmetrics"
	"github.com/watch-doctor/watch-doctor/internal/cli"
	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
)

// BenchmarkAnalyzeAPFOnly runs `analyze t1 t2 -o json` in this process on
// two captures of a server without profiling (dumpgen.WriteAPFOnlyCaptures):
// 50,000 executing watch rows in each APF dump_requests, no goroutine
// dump. Every row must be reported stuck. The gate (< 3 s, < 256 MiB) is
// checked as a process by `wdbench apfonly` (bench/README.md, "APF-only").
func BenchmarkAnalyzeAPFOnly(b *testing.B) {
	for _, n := range []int{5_000, 50_000} {
		dirs, err := dumpgen.WriteAPFOnlyCaptures(filepath.Join(b.TempDir(), "apf-only"), n)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("rows="+benchmetrics.SizeName(n), func(b *testing.B) {
			b.ReportAllocs()
			var out bytes.Buffer
			t := benchmetrics.Start()
			for b.Loop() {
				out.Reset()
				var errOut bytes.Buffer
				streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
				if code := cli.Main(streams, append(append([]string{"analyze"}, dirs...), "-o", "json")); code != cli.ExitFindings {
					b.Fatalf("exit code %d, want %d (critical findings): %s", code, cli.ExitFindings, errOut.String())
				}
			}
			t.ReportOp(b)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
			var r struct {
				Summary struct {
					StuckWatches int `json:"stuckWatches"`
				} `json:"summary"`
			}
			if err := json.Unmarshal(out.Bytes(), &r); err != nil || r.Summary.StuckWatches != n {
				b.Fatalf("%d stuck watches (%v), want the %d rows", r.Summary.StuckWatches, err, n)
			}
		})
	}
}
