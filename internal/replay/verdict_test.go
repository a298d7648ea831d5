package replay

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// column returns a column named name whose clients a, b, c have the given
// outcomes.
func column(name string, outcomes ...api.Outcome) api.Column {
	col := api.Column{Name: name}
	for i, o := range outcomes {
		col.Clients = append(col.Clients, api.ClientResult{Name: string(rune('a' + i)), Outcome: o})
	}
	return col
}

func TestVerdictOf(t *testing.T) {
	blocked, stopped, completed := api.OutcomeBlocked, api.OutcomeStopped, api.OutcomeCompleted
	unpatched := column(api.ColumnUnpatched, blocked, completed, completed)
	unpatched.BlockedGoroutines = 1
	pr := column(api.ColumnPR141899, stopped, completed, stopped)
	pr.Clients[0].HandlerBlockedInWrite = true
	pr.APFSeatSeconds = 12
	unpatched.APFSeatSeconds = 12
	tests := []struct {
		name    string
		columns []api.Column
		want    api.Verdict
	}{
		{
			name:    "no fixed column",
			columns: []api.Column{unpatched},
			want:    api.Verdict{Summary: "nothing to compare: the unpatched column and a fixed one (pr141899 or complete) are needed"},
		},
		{
			name:    "freed and cut",
			columns: []api.Column{unpatched, pr},
			want: api.Verdict{
				Freed:          []string{"a"},
				Cut:            []string{"c"},
				HeldByPR141899: []string{"a"},
				Summary: "the stall timeout stops the watcher of 1 stuck watch (0 blocked goroutines left, 1 unpatched); " +
					"pr141899 leaves 1 handler blocked writing and 12 APF seat-seconds held (12 unpatched), telling no client; " +
					"the stall timeout CUTS 1 client that completes without it: c",
			},
		},
		{
			name:    "nothing stuck",
			columns: []api.Column{column(api.ColumnUnpatched, completed), column(api.ColumnComplete, completed)},
			want:    api.Verdict{Summary: "nothing is stuck unpatched; the stall timeout cuts no client that completes without it"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := verdictOf(&api.Replay{Columns: tt.columns})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("verdictOf (-want +got):\n%s", diff)
			}
		})
	}
}

// The loop part names the clients that never have their initial events
// with the stall timeout, in the number of the clients named.
func TestLoopPartGrammar(t *testing.T) {
	done := 3.0
	loop := func(names ...string) (api.Column, api.Column) {
		un, fixed := api.Column{Name: api.ColumnUnpatched}, api.Column{Name: api.ColumnPR141899, Closures: 2, Returns: 2}
		for _, n := range names {
			un.Clients = append(un.Clients, api.ClientResult{Name: n, InitialDoneAtSeconds: &done})
			fixed.Clients = append(fixed.Clients, api.ClientResult{Name: n, Returns: 1})
		}
		return un, fixed
	}
	tests := []struct {
		names []string
		want  string
	}{
		{[]string{"slow-curl"}, "clients that relist loop, closures and returns: unpatched 0 and 0 (0 APF seat-seconds), pr141899 2 and 2 (0 APF seat-seconds); with the stall timeout slow-curl never has its initial events (pr141899), unpatched it did"},
		{[]string{"slow-curl", "slow-node"}, "clients that relist loop, closures and returns: unpatched 0 and 0 (0 APF seat-seconds), pr141899 2 and 2 (0 APF seat-seconds); with the stall timeout slow-curl, slow-node never have their initial events (pr141899), unpatched they did"},
	}
	for _, tt := range tests {
		t.Run(tt.names[0], func(t *testing.T) {
			un, fixed := loop(tt.names...)
			res := &api.Replay{Columns: []api.Column{un, fixed}}
			if diff := cmp.Diff(tt.want, loopPart(res, &un, &fixed)); diff != "" {
				t.Errorf("loop part (-want +got):\n%s", diff)
			}
		})
	}
}
