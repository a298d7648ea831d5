package report_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/benchmetrics"
	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/diagnosis"
	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/report"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// BenchmarkRenderReport measures printing, the last stage of analyze: the
// report of the real t1+t2 captures (2 findings, APF, metrics) and of a
// generated dump with 500 stuck watches, in every format, and of a relist
// storm of 50,000 alike, as a table and as JSON.
func BenchmarkRenderReport(b *testing.B) {
	loaded, err := bundle.Load([]string{golden.Fixture("t1"), golden.Fixture("t2")}, bundle.Options{})
	if err != nil {
		b.Fatal(err)
	}
	real := diagnosis.Diagnose(loaded.Servers(), diagnosis.Options{})

	data, res, err := dumpgen.Cached(dumpgen.Config{Goroutines: 10_000, Stuck: 500})
	if err != nil {
		b.Fatal(err)
	}
	d, err := bundle.ReadDebug2(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	many := diagnosis.Diagnose([]watches.Server{{Name: "generated", Samples: []watches.Sample{{Source: "generated", Dump: d}}}}, diagnosis.Options{})
	if many.Summary.StuckWatches != len(res.Planted) {
		b.Fatalf("%d stuck watches, want the %d planted", many.Summary.StuckWatches, len(res.Planted))
	}

	// A relist storm: 50,000 findings alike but for their goroutines, whose
	// table is one row with a COUNT. Not wide: tablewriter lays out 50,000
	// wide rows in seconds.
	storm := *many
	storm.Findings = nil
	for i := range 50_000 {
		f := many.Findings[0]
		f.Watcher.GoroutineID = int64(4 * i)
		storm.Findings = append(storm.Findings, f)
	}

	for _, in := range []struct {
		name    string
		r       *api.Report
		formats []report.Format
	}{
		{"real-t1-t2", real, report.Formats()},
		{"stuck=" + benchmetrics.SizeName(len(res.Planted)), many, report.Formats()},
		{"storm=50k", &storm, []report.Format{report.FormatTable, report.FormatJSON}},
	} {
		for _, f := range in.formats {
			b.Run(in.name+"/"+string(f), func(b *testing.B) {
				var out countWriter
				b.ReportAllocs()
				t := benchmetrics.Start()
				for b.Loop() {
					if err := report.Print(&out, in.r, report.Options{Format: f}); err != nil {
						b.Fatal(err)
					}
				}
				t.ReportOp(b)
				b.ReportMetric(float64(out.n)/float64(b.N), "out-B/op")
				b.ReportMetric(float64(len(in.r.Findings)), "findings")
			})
		}
	}
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

var _ io.Writer = (*countWriter)(nil)
