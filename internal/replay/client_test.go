package replay

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestAllowance(t *testing.T) {
	gone := time.Second
	tests := []struct {
		name string
		run  *clientRun
		want int
	}{
		{name: "healthy reads everything", run: &clientRun{model: Model{Kind: ModelHealthy}}, want: math.MaxInt32},
		{name: "paced reads its whole tokens", run: &clientRun{model: Model{Kind: ModelPaced}, tokens: 2.7}, want: 2},
		{name: "stops after N, some taken", run: &clientRun{model: Model{Kind: ModelStopsAfter, Events: 5}, taken: 3}, want: 2},
		{name: "stops after N, all taken", run: &clientRun{model: Model{Kind: ModelStopsAfter, Events: 5}, taken: 9}, want: 0},
		{name: "stops after the initial events", run: &clientRun{model: Model{Kind: ModelStopsAfter, AfterInitialEvents: true}, expected: 4, taken: 1}, want: 3},
		{name: "and their end bookmark", run: &clientRun{model: Model{Kind: ModelStopsAfter, AfterInitialEvents: true}, expected: 4, wantEnd: true, taken: 1}, want: 4},
		{name: "disconnects, still connected", run: &clientRun{model: Model{Kind: ModelDisconnectsAfter}}, want: math.MaxInt32},
		{name: "disconnected", run: &clientRun{model: Model{Kind: ModelDisconnectsAfter}, disconnectedAt: &gone}, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.run.allowance(); got != tt.want {
				t.Errorf("allowance() = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestExpandClients(t *testing.T) {
	res := &worldResource{name: "pods"}
	w := &world{byName: map[string]*worldResource{"pods": res}}
	sc := &Scenario{Clients: []Client{
		{Name: "one", Resource: "pods", Model: "healthy", Count: 1, StartAt: Duration{time.Second}},
		{Name: "many", Resource: "pods", Model: "stops-after 3", Count: 3, StartAt: Duration{2 * time.Second}, Every: Duration{500 * time.Millisecond}},
	}}
	type row struct {
		Name  string
		Model string
		Start time.Duration
	}
	var got []row
	for _, r := range expandClients(sc, w) {
		if r.resource != res {
			t.Errorf("%s: resource %v, want pods", r.name, r.resource)
		}
		got = append(got, row{r.name, r.model.String(), r.start})
	}
	want := []row{
		{"one", "healthy", time.Second},
		{"many-1", "stops-after 3", 2 * time.Second},
		{"many-2", "stops-after 3", 2500 * time.Millisecond},
		{"many-3", "stops-after 3", 3 * time.Second},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("expandClients (-want +got):\n%s", diff)
	}
}
