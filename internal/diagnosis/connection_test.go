package diagnosis

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// onConnection makes n findings whose handlers share connection goroutine
// 7; attributed(i) says which are attributed exact, to user u-i.
func onConnection(n int, attributed func(i int) bool) []*api.Finding {
	fs := make([]*api.Finding, n)
	for i := range fs {
		f := &api.Finding{Connection: 7, Watcher: api.Watcher{GoroutineID: int64(1000 + i), Handler: &api.Handler{GoroutineID: int64(5000 + i), ConnGoroutineID: 7, ConnInDump: true, ConnWatches: n}}}
		if attributed(i) {
			f.Client = &api.Client{User: fmt.Sprintf("u-%d", i), Match: api.MatchExact}
		} else {
			f.Client = &api.Client{Match: api.MatchAmbiguous}
		}
		fs[i] = f
	}
	return fs
}

// TestConnectionEvidenceIsLinear fails when connection evidence is
// quadratic in the findings sharing one connection: doubling them must at
// most double both the work connectionEvidence counts (findings visited,
// mates named included) and the evidence lines it writes, whether none,
// some or all of them are attributed. Before the summary line, all
// attributed at n=2000 wrote n*n lines and visited n*n mates.
func TestConnectionEvidenceIsLinear(t *testing.T) {
	const n = 2000
	for _, tc := range []struct {
		name       string
		attributed func(i int) bool
	}{
		{"none attributed", func(int) bool { return false }},
		{"every tenth attributed", func(i int) bool { return i%10 == 0 }},
		{"all attributed", func(int) bool { return true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cost := func(n int) (work, lines int) {
				fs := onConnection(n, tc.attributed)
				work = connectionEvidence(fs)
				for _, f := range fs {
					lines += len(f.Evidence)
				}
				return work, lines
			}
			w1, l1 := cost(n)
			w2, l2 := cost(2 * n)
			if w2 > 2*w1 || l2 > 2*l1 {
				t.Errorf("findings %d -> %d: work %d -> %d, evidence lines %d -> %d: more than doubled (quadratic)", n, 2*n, w1, w2, l1, l2)
			}
			if l2 > 2*(2*n) {
				t.Errorf("%d findings on one connection got %d evidence lines: want at most 2 each", 2*n, l2)
			}
		})
	}
}

// Below maxMatesListed attributed mates a finding names each of them, as
// before; past it, one summary line counting them and naming the first
// users.
func TestConnectionEvidenceLines(t *testing.T) {
	conn := "HTTP/2 connection (goroutine 7) carries 3 watch requests, 3 in this report"
	mate := func(id int64, user string) string {
		return fmt.Sprintf("shares that connection with watcher goroutine %d, attributed exact to %s: the same client process (or a proxy in front of the API server)", id, user)
	}
	few := onConnection(3, func(i int) bool { return i > 0 })
	connectionEvidence(few)
	want := [][]string{
		{conn, mate(1001, "u-1"), mate(1002, "u-2")},
		{conn, mate(1002, "u-2")},
		{conn, mate(1001, "u-1")},
	}
	for i, f := range few {
		if diff := cmp.Diff(want[i], f.Evidence); diff != "" {
			t.Errorf("finding %d (-want +got):\n%s", i, diff)
		}
	}

	many := onConnection(maxMatesListed+3, func(i int) bool { return i > 0 })
	many[3].Client.User = "u-2" // two watchers of u-2
	connectionEvidence(many)
	conn = fmt.Sprintf("HTTP/2 connection (goroutine 7) carries %d watch requests, %d in this report", maxMatesListed+3, maxMatesListed+3)
	tail := ": the same client process (or a proxy in front of the API server); too many to list one by one"
	for _, tc := range []struct {
		i    int
		want []string
	}{
		{0, []string{conn, `shares that connection with 12 other watchers attributed exact or likely, to 11 users ("u-1", "u-10", "u-11" and 8 more)` + tail}},
		{1, []string{conn, `shares that connection with 11 other watchers attributed exact or likely, to 10 users ("u-10", "u-11", "u-12" and 7 more)` + tail}},
		{2, []string{conn, `shares that connection with 11 other watchers attributed exact or likely, to 11 users ("u-1", "u-10", "u-11" and 8 more)` + tail}},
	} {
		if diff := cmp.Diff(tc.want, many[tc.i].Evidence); diff != "" {
			t.Errorf("crowded connection, finding %d (-want +got):\n%s", tc.i, diff)
		}
	}
}
