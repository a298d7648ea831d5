package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/watch-doctor/watch-doctor/internal/benchmetrics"
	"github.com/watch-doctor/watch-doctor/internal/cli"
	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
)

// dumpDir is where generated dumps are kept between runs (gitignored); the
// same files cmd/wdbench reads under make bench.
const dumpDir = "out/dumps"

// BenchmarkAnalyze runs the whole command, `analyze FILE -o json`, as the
// plugin's main does but in this process, on generated dumps streamed from
// files: read, classify, link, diagnose, render. Every run's report must
// hold exactly the planted stuck watches. WATCH_DOCTOR_BENCH_SIZES
// overrides the sizes (default "10k,100k,1M").
func BenchmarkAnalyze(b *testing.B) {
	set, err := dumpgen.LoadRepo()
	if err != nil {
		b.Fatal(err)
	}
	sizes := []int{10_000, 100_000, 1_000_000}
	if s := os.Getenv("WATCH_DOCTOR_BENCH_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := dumpgen.ParseSize(strings.TrimSpace(f))
			if err != nil {
				b.Fatal(err)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		path := filepath.Join(dumpDir, "goroutines-"+benchmetrics.SizeName(n)+".txt")
		res, _, err := set.EnsureFile(path, dumpgen.Config{Goroutines: n, Stuck: 8})
		if err != nil {
			b.Fatal(err)
		}
		b.Run("dump="+benchmetrics.SizeName(n), func(b *testing.B) {
			b.SetBytes(res.Bytes)
			b.ReportAllocs()
			var out bytes.Buffer
			t := benchmetrics.Start()
			for b.Loop() {
				out.Reset()
				var errOut bytes.Buffer
				streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
				if code := cli.Main(streams, []string{"analyze", path, "-o", "json"}); code != cli.ExitFindings {
					b.Fatalf("exit code %d, want %d (critical findings): %s", code, cli.ExitFindings, errOut.String())
				}
			}
			t.Report(b, n)
			checkReport(b, out.Bytes(), res)
		})
	}
}

// checkReport fails b unless the report holds exactly the planted stuck
// watches, each fully linked, and no other finding.
func checkReport(b *testing.B, out []byte, res dumpgen.Result) {
	b.Helper()
	var r struct {
		Findings []struct {
			Type    string `json:"type"`
			Watcher struct {
				GoroutineID int64 `json:"goroutineID"`
				Handler     *struct {
					GoroutineID     int64 `json:"goroutineID"`
					ConnGoroutineID int64 `json:"connGoroutineID"`
				} `json:"handler"`
				APFGoroutineID int64 `json:"apfGoroutineID"`
			} `json:"watcher"`
		} `json:"findings"`
		Summary struct {
			Goroutines int `json:"goroutines"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		b.Fatalf("decoding the report: %v", err)
	}
	if r.Summary.Goroutines != res.Goroutines || len(r.Findings) != len(res.Planted) {
		b.Fatalf("report: %d goroutines, %d findings; want %d goroutines and the %d planted stuck watches", r.Summary.Goroutines, len(r.Findings), res.Goroutines, len(res.Planted))
	}
	want := map[int64]dumpgen.Planted{}
	for _, p := range res.Planted {
		want[p.WatcherID] = p
	}
	for _, f := range r.Findings {
		p, ok := want[f.Watcher.GoroutineID]
		h := f.Watcher.Handler
		if !ok || f.Type != "StuckInitialEvents" || h == nil || h.GoroutineID != p.HandlerID || h.ConnGoroutineID != p.ConnID || f.Watcher.APFGoroutineID != p.APFID {
			b.Fatalf("finding %s for watcher %d (handler %+v, APF %d) is not a planted stuck watch", f.Type, f.Watcher.GoroutineID, h, f.Watcher.APFGoroutineID)
		}
		delete(want, f.Watcher.GoroutineID)
	}
	if len(want) > 0 {
		b.Fatalf("%d planted stuck watches not reported", len(want))
	}
}
