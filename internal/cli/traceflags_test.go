package cli

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// TestTraceFlags: --evidence and --trace-budget, bound on a command with
// their defaults, resolve into the engine's TraceConfig, and bad values
// name the flag and what it takes.
func TestTraceFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want model.TraceConfig
		err  string
	}{
		{name: "defaults", want: model.TraceConfig{Evidence: model.EvidenceAuto, Budget: 128 << 20}},
		{name: "trace, 1Gi", args: []string{"--evidence=trace", "--trace-budget=1Gi"}, want: model.TraceConfig{Evidence: model.EvidenceTrace, Budget: 1 << 30}},
		{name: "dump, decimal", args: []string{"--evidence", "dump", "--trace-budget", "5M"}, want: model.TraceConfig{Evidence: model.EvidenceDump, Budget: 5_000_000}},
		{name: "the least budget", args: []string{"--trace-budget=1Mi"}, want: model.TraceConfig{Evidence: model.EvidenceAuto, Budget: 1 << 20}},
		{name: "unknown evidence", args: []string{"--evidence=pprof"}, err: `unsupported --evidence "pprof": use one of auto, dump, trace`},
		{name: "evidence is case-sensitive", args: []string{"--evidence=Trace"}, err: `unsupported --evidence "Trace": use one of auto, dump, trace`},
		{name: "budget too small", args: []string{"--trace-budget=512Ki"}, err: `invalid --trace-budget "512Ki": use a quantity of at least 1Mi, like 128Mi or 1Gi`},
		{name: "budget not a quantity", args: []string{"--trace-budget=lots"}, err: `invalid --trace-budget "lots": use a quantity of at least 1Mi, like 128Mi or 1Gi`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tf := newTraceFlags()
			cmd := &cobra.Command{Use: "x"}
			addTraceFlags(cmd, &tf)
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			err := tf.validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.err {
				t.Fatalf("validate() = %q, want %q", got, tc.err)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.want, tf.config()); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}
