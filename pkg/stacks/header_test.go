package stacks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestScannerHeaderVariants(t *testing.T) {
	stuck := []gFrame{frameSend, frameInterval}
	tests := []struct {
		name   string
		header gHeader
		want   Goroutine // ID, Frames, CreatedBy, ParentID and Line are filled in
	}{
		{
			name:   "state only",
			header: gHeader{status: "select"},
			want:   Goroutine{State: "select"},
		},
		{
			name:   "wait under a minute prints no minutes",
			header: gHeader{status: "select", minutes: 0},
			want:   Goroutine{State: "select"},
		},
		{
			name:   "one minute",
			header: gHeader{status: "chan receive", minutes: 1},
			want:   Goroutine{State: "chan receive", WaitMinutes: 1},
		},
		{
			name:   "many minutes",
			header: gHeader{status: "select", minutes: 1440},
			want:   Goroutine{State: "select", WaitMinutes: 1440},
		},
		{
			name:   "locked to thread",
			header: gHeader{status: "chan receive", locked: true},
			want:   Goroutine{State: "chan receive", LockedToThread: true},
		},
		{
			name:   "minutes and locked to thread",
			header: gHeader{status: "syscall", minutes: 2, locked: true},
			want:   Goroutine{State: "syscall", WaitMinutes: 2, LockedToThread: true},
		},
		{
			name:   "GOTRACEBACK=system gp m mp",
			header: gHeader{system: true, m: 3, status: "select", minutes: 2},
			want:   Goroutine{State: "select", WaitMinutes: 2},
		},
		{
			name:   "GOTRACEBACK=system m=nil",
			header: gHeader{system: true, m: -1, status: "IO wait"},
			want:   Goroutine{State: "IO wait"},
		},
		{
			name:   "scan bit",
			header: gHeader{status: "chan receive", scan: true, minutes: 3},
			want:   Goroutine{State: "chan receive", WaitMinutes: 3, Flags: []string{"scan"}},
		},
		{
			name:   "leaked",
			header: gHeader{status: "chan send", leaked: true},
			want:   Goroutine{State: "chan send", Flags: []string{"leaked"}},
		},
		{
			name:   "leaked and scan",
			header: gHeader{status: "select", leaked: true, scan: true},
			want:   Goroutine{State: "select", Flags: []string{"leaked", "scan"}},
		},
		{
			name:   "durable wait reason in a synctest bubble",
			header: gHeader{status: "chan receive (durable)", bubble: 1},
			want:   Goroutine{State: "chan receive", Flags: []string{"durable", "synctest bubble 1"}},
		},
		{
			name:   "durable added by the runtime",
			header: gHeader{status: "sleep", durable: true, bubble: 3},
			want:   Goroutine{State: "sleep", Flags: []string{"durable", "synctest bubble 3"}},
		},
		{
			name:   "durable with minutes and scan",
			header: gHeader{status: "sync.WaitGroup.Wait (durable)", scan: true, minutes: 5, bubble: 12},
			want:   Goroutine{State: "sync.WaitGroup.Wait", WaitMinutes: 5, Flags: []string{"durable", "scan", "synctest bubble 12"}},
		},
		{
			name:   "synctest.Run not durable",
			header: gHeader{status: "synctest.Run", bubble: 2},
			want:   Goroutine{State: "synctest.Run", Flags: []string{"synctest bubble 2"}},
		},
		{
			name:   "parenthesised wait reason nil chan",
			header: gHeader{status: "chan receive (nil chan)", minutes: 7},
			want:   Goroutine{State: "chan receive (nil chan)", WaitMinutes: 7},
		},
		{
			name:   "parenthesised wait reason select no cases",
			header: gHeader{status: "select (no cases)"},
			want:   Goroutine{State: "select (no cases)"},
		},
		{
			name:   "parenthesised wait reason GC worker idle and scan",
			header: gHeader{status: "GC worker (idle)", scan: true},
			want:   Goroutine{State: "GC worker (idle)", Flags: []string{"scan"}},
		},
		{
			name:   "labels",
			header: gHeader{status: "select", labels: [][2]string{{"user", "slow-informer"}, {"verb", "watch"}}},
			want:   Goroutine{State: "select", Labels: map[string]string{"user": "slow-informer", "verb": "watch"}},
		},
		{
			name: "labels after every other item",
			header: gHeader{system: true, m: 1, status: "chan receive", scan: true, minutes: 4, locked: true, bubble: 9,
				labels: [][2]string{{"k", "v"}}},
			want: Goroutine{State: "chan receive", WaitMinutes: 4, LockedToThread: true,
				Flags: []string{"scan", "synctest bubble 9"}, Labels: map[string]string{"k": "v"}},
		},
		{
			name: "labels holding separators and escapes",
			header: gHeader{status: "select", minutes: 2, labels: [][2]string{
				{"a, 3 minutes", "locked to thread"}, {"b]:", " labels:{\"x\": \"y\"}"}, {"esc\t\n\x00\x1b", "\u1234Σ\U00045678"},
			}},
			want: Goroutine{State: "select", WaitMinutes: 2, Labels: map[string]string{
				"a, 3 minutes": "locked to thread", "b]:": " labels:{\"x\": \"y\"}", "esc\t\n\x00\x1b": "\u1234Σ\U00045678",
			}},
		},
		{
			name:   "empty label value",
			header: gHeader{status: "select", labels: [][2]string{{"k", ""}}},
			want:   Goroutine{State: "select", Labels: map[string]string{"k": ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.header.id = 33988
			g := gDump{header: tt.header, frames: stuck, creator: creatorWatch}
			gs, st := parseAll(t, g.String())
			want := tt.want
			want.ID, want.Frames, want.CreatedBy, want.ParentID, want.Line = 33988, wantFrames(stuck...), creatorWatch.want(), 33855, 1
			if len(gs) != 1 {
				t.Fatalf("got %d goroutines, want 1", len(gs))
			}
			if diff := cmp.Diff(&want, gs[0], goroutineOpts, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("goroutine mismatch (-want +got):\n%s\ninput:\n%s", diff, g)
			}
			if st.SkippedLines != 0 {
				t.Errorf("skipped %v, want none", st.Skipped)
			}
		})
	}
}
