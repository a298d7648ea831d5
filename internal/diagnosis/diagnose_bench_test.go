package diagnosis_test

import (
	"bytes"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/benchmetrics"
	"github.com/watch-doctor/watch-doctor/internal/diagnosis"
	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// BenchmarkDiagnose measures the rules: findings from a classified dump
// (read once, outside the loop).
func BenchmarkDiagnose(b *testing.B) {
	for _, stuck := range []int{4, 500} {
		data, res, err := dumpgen.Cached(dumpgen.Config{Goroutines: 10_000, Stuck: stuck})
		if err != nil {
			b.Fatal(err)
		}
		d, err := watches.ReadDump(bytes.NewReader(data), watches.ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		servers := []watches.Server{{Name: "bench", Samples: []watches.Sample{{Source: "bench", Dump: d}}}}
		b.Run("stuck="+benchmetrics.SizeName(stuck), func(b *testing.B) {
			b.ReportAllocs()
			var r *api.Report
			for b.Loop() {
				r = diagnosis.Diagnose(servers, diagnosis.Options{})
			}
			if r.Summary.StuckWatches != len(res.Planted) {
				b.Fatalf("%d stuck watches, want the %d planted", r.Summary.StuckWatches, len(res.Planted))
			}
		})
	}
}
