package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// traceFlags are --evidence and --trace-budget of diagnose and collect.
type traceFlags struct {
	Evidence string
	Budget   string

	evidence model.Evidence
	budget   int64
}

func newTraceFlags() traceFlags {
	return traceFlags{Evidence: string(model.EvidenceAuto), Budget: "128Mi"}
}

func addTraceFlags(cmd *cobra.Command, t *traceFlags) {
	cmd.Flags().StringVar(&t.Evidence, "evidence", t.Evidence, "what tells stuck from slow between the samples: auto (the debug=2 dump when its estimated pause fits --max-pause, else an execution trace of the interval), dump, or trace")
	cmd.Flags().StringVar(&t.Budget, "trace-budget", t.Budget, "the most bytes of execution trace read from each API server; the trace stops at a generation's end when the next would not fit, so a server that sends more than the budget holds is traced for less than the interval, and the report says so (a 70 s trace of 22,000 goroutines is about 50 MB, of 100,000 about 90 MB)")
}

// validate resolves the flags.
func (t *traceFlags) validate() error {
	switch e := model.Evidence(t.Evidence); e {
	case model.EvidenceAuto, model.EvidenceDump, model.EvidenceTrace:
		t.evidence = e
	default:
		return fmt.Errorf("unsupported --evidence %q: use one of auto, dump, trace", t.Evidence)
	}
	b, err := parseTraceBudget(t.Budget)
	t.budget = b
	return err
}

// parseTraceBudget reads --trace-budget (diagnose, collect and serve).
func parseTraceBudget(s string) (int64, error) {
	q, err := resource.ParseQuantity(s)
	if err != nil || q.Value() < 1<<20 {
		return 0, fmt.Errorf("invalid --trace-budget %q: use a quantity of at least 1Mi, like 128Mi or 1Gi", s)
	}
	return q.Value(), nil
}

// config is the engine's TraceConfig.
func (t *traceFlags) config() model.TraceConfig {
	return model.TraceConfig{Evidence: t.evidence, Budget: t.budget}
}
