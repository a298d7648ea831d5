package model

import (
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/english"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func TestConfigDumpPolicy(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		cfg         Config
		force       bool
		wantRefused string
	}{
		{"a permit decides", Config{}, false, ""},
		{"force", Config{Force: true}, true, ""},
		{"no dump fetched", Config{Only: []api.FileKind{api.FileMetrics}}, false, "this run's fetches do not include the goroutine dump"},
		{"trace chosen", Config{Trace: TraceConfig{Evidence: EvidenceTrace}, Words: english.Words{Evidence: "evidence:"}}, false, "the evidence chosen is an execution trace (evidence: trace)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.cfg.DumpPolicy()
			if p.Force != tt.force || p.Refused != tt.wantRefused {
				t.Errorf("DumpPolicy() = force %v, refused %q; want %v, %q", p.Force, p.Refused, tt.force, tt.wantRefused)
			}
		})
	}
}
