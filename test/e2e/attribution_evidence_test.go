package e2e

import (
	"encoding/json"
	"fmt"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
)

// evidenceReport is the part of the report the evidence checks read:
// each finding's handler as the goroutine dump showed it and the evidence
// lines of its attribution.
type evidenceReport = api.Report

// The clients' transports: @kubernetes/client-node speaks HTTP/1.1, the
// others HTTP/2.
var attrTransport = map[string]string{
	cluster.UserCurlReader: "http2", cluster.UserKubectlReader: "http2", cluster.UserNodeReader: "http/1.1",
	cluster.UserSlowInformer: "http2", cluster.UserPacedReader: "http2", cluster.UserHealthyClient: "http2",
}

var (
	connLine   = regexp.MustCompile(`^(HTTP/2|HTTP/1\.1) connection (0x[0-9a-f]+ )?\(goroutine (\d+)\) carries (only this watch request|(\d+) watch requests, (\d+) in this report)`)
	sizeLine   = regexp.MustCompile(`^the handler writes an event of (\d+) bytes; apiserver_watch_events_sizes has counted (.*): (consistent|not corroborated, not contradicted)`)
	gaugeLine  = regexp.MustCompile(`^/metrics: apiserver_longrunning_requests\{verb="WATCH"\} counts (\d+) watches of (\S+)`)
	mateLine   = regexp.MustCompile(`^shares that connection with watcher goroutine (\d+), attributed (exact|likely) to (\S+):`)
	sizeTotals = map[string]int{}
	// handlerShapes counts, over the runs, what the findings' handlers
	// showed: transport, and whether the dump printed the connection's
	// address and the event's length (logged for the figures of docs/analyze.md).
	handlerShapes = map[string]int{}
)

// checkEvidence asserts, on one report of the real server, what the
// dumps and /metrics add to the attribution:
//   - /metrics never contradicts the object types (no false alarm on a
//     consistent server), and the resource a finding names has its
//     apiserver_longrunning_requests line, counting at least that watch;
//   - every finding reports its connection; each handler's transport is
//     its client's (HTTP/1.1 for client-node, HTTP/2 for the others: every
//     candidate's when ambiguous); the clients that are processes of their
//     own (curl, kubectl, node) have a connection to themselves; a
//     connection-mate of an attributed watch names it;
//   - a handler whose write length the dump shows gets the size line.
func checkEvidence(t *testing.T, res pluginResult) {
	t.Helper()
	var rep evidenceReport
	if err := json.Unmarshal([]byte(res.Stdout), &rep); err != nil {
		t.Fatalf("decoding the report: %v", err)
	}
	for _, w := range rep.Warnings {
		if strings.Contains(w, "do not agree with /metrics") {
			t.Errorf("/metrics contradicted the object types on a consistent server: %s", w)
		}
	}
	byID := map[int64]string{} // watcher goroutine -> attributed user
	for _, f := range rep.Findings {
		if f.Client != nil && (f.Client.Match == "exact" || f.Client.Match == "likely") {
			byID[f.Watcher.GoroutineID] = f.Client.User
		}
	}
	groups := map[int64][]string{}
	for _, f := range rep.Findings {
		h := f.Watcher.Handler
		if h == nil || f.Client == nil {
			continue
		}
		users := []string{f.Client.User}
		if f.Client.Match == "ambiguous" {
			users = nil
			for _, c := range f.Candidates {
				users = append(users, c.User)
			}
		} else if want := attrTransport[f.Client.User]; want != h.Transport {
			// APF rows carry no transport, so an ambiguous finding may
			// list clients of either; an attributed one may not.
			t.Errorf("finding on watcher %d attributed to %s: handler transport %q, but %s speaks %s", f.Watcher.GoroutineID, f.Client.User, h.Transport, f.Client.User, want)
		}
		seen := fmt.Sprintf("%s conn-address=%v event-bytes=%v", h.Transport, h.ConnAddress != "", h.EventBytes > 0)
		handlerShapes[seen]++
		var conn, gauge, size []string
		var mates [][]string
		for _, e := range f.Evidence {
			if m := connLine.FindStringSubmatch(e); m != nil {
				conn = m
			}
			if m := gaugeLine.FindStringSubmatch(e); m != nil {
				gauge = m
			}
			if m := sizeLine.FindStringSubmatch(e); m != nil {
				size = m
			}
			if m := mateLine.FindStringSubmatch(e); m != nil {
				mates = append(mates, m)
			}
		}
		if conn == nil || conn[3] != fmt.Sprint(f.Connection) {
			t.Errorf("finding on watcher %d (connection %d) has no connection line: %q", f.Watcher.GoroutineID, f.Connection, f.Evidence)
			continue
		}
		groups[f.Connection] = append(groups[f.Connection], strings.Join(users, "|"))
		if f.Client.Match == "exact" && slices.Contains([]string{cluster.UserCurlReader, cluster.UserKubectlReader, cluster.UserNodeReader}, f.Client.User) && conn[4] != "only this watch request" {
			t.Errorf("%s is a process of its own with one watch, yet its connection %s", f.Client.User, conn[0])
		}
		if f.Client.Resource != "" && (gauge == nil || gauge[2] != f.Client.Resource || gauge[1] == "0") {
			t.Errorf("finding on watcher %d (%s) has no apiserver_longrunning_requests line counting its watch: %q", f.Watcher.GoroutineID, f.Client.Resource, gauge)
		}
		if h.EventBytes > 0 {
			if size == nil || size[1] != fmt.Sprint(h.EventBytes) {
				t.Errorf("handler writes %d bytes but the finding has no size line: %q", h.EventBytes, f.Evidence)
			} else {
				sizeTotals[f.Client.Resource+" "+size[3]]++
			}
		}
		for _, m := range mates {
			if u := byID[parseID(m[1])]; u != m[3] {
				t.Errorf("connection-mate line %q names %s, but watcher %s is attributed to %q", m[0], m[3], m[1], u)
			}
		}
	}
	var gs []string
	for c, us := range groups {
		gs = append(gs, fmt.Sprintf("%d: %s", c, strings.Join(us, ", ")))
	}
	sort.Strings(gs)
	t.Logf("connection groups of the findings: %s; so far, size lines: %v, handlers: %v", strings.Join(gs, "; "), sizeTotals, handlerShapes)
}

func parseID(s string) int64 {
	var id int64
	fmt.Sscan(s, &id)
	return id
}
