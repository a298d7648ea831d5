package live

import (
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Once one connection through the balancer reached two processes, every
// sample read through it is mixed; a pinned instance's are not, nor, when
// a sample is mixed without a connection reaching two, the others.
func TestSpreadMixed(t *testing.T) {
	t.Parallel()
	results := func(mixed string) []model.InstanceResult {
		return []model.InstanceResult{
			{Instance: model.Instance{Name: "lb#a"}, Samples: []api.Sample{{Mixed: mixed}}, Spread: mixed},
			{Instance: model.Instance{Name: "lb#b"}, Samples: []api.Sample{{}, {}}},
			{Instance: model.Instance{Name: "10.0.0.1:6443", Pinned: true}, Samples: []api.Sample{{}}},
		}
	}
	rs := results("sample 1 reached different API server processes")
	spreadMixed(rs)
	for _, s := range rs[1].Samples {
		if !strings.Contains(s.Mixed, "lb#a's samples through the same load balancer reached several") {
			t.Errorf("lb#b's sample: mixed %q, want it said", s.Mixed)
		}
	}
	if m := rs[2].Samples[0].Mixed; m != "" {
		t.Errorf("a pinned instance's sample marked mixed: %q", m)
	}
	rs = results("")
	rs[0].Samples[0].Mixed = "sample 1: the connection was dialed again during the sample"
	spreadMixed(rs)
	for _, r := range rs[1:] {
		for _, s := range r.Samples {
			if s.Mixed != "" {
				t.Errorf("%s marked mixed though no sample reached several processes: %q", r.Instance.Name, s.Mixed)
			}
		}
	}
}
