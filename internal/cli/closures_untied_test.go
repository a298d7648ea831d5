package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// untiedClosureCapture is the fixture name (t1, t2) with the watch
// requests left out of its APF dump (only the dump request itself stays)
// and apiserver_terminated_watchers_total of configmaps at terminated in
// its /metrics.
func untiedClosureCapture(t *testing.T, name, terminated string) string {
	t.Helper()
	return fakeapiserver.EditCapture(t, golden.Fixture(name), func(file string, b []byte) []byte {
		switch file {
		case "apf-requests.txt":
			var keep []string
			for _, l := range strings.Split(string(b), "\n") {
				if !strings.Contains(l, " watch,") {
					keep = append(keep, l)
				}
			}
			return []byte(strings.Join(keep, "\n"))
		case "metrics.txt":
			return append(b, []byte("# HELP apiserver_terminated_watchers_total [ALPHA] Counter of watchers closed due to unresponsiveness broken by resource type.\n"+
				"# TYPE apiserver_terminated_watchers_total counter\n"+
				`apiserver_terminated_watchers_total{group="",resource="configmaps"} `+terminated+"\n")...)
		}
		return b
	})
}

// A run where the server closed watches (its counter grew by 3 between
// the samples) and no evidence could tie them to a client: no profile
// (--profiling=false), no watch in either APF dump, no audit log.
// diagnose says so, in the finding and in the table, names no client and
// is no all-clear: a critical finding, exit 1.
func TestClosuresNobodyCouldBeTiedTo(t *testing.T) {
	t.Parallel()
	a := fakeapiserver.Start(t, untiedClosureCapture(t, "t1", "4"), untiedClosureCapture(t, "t2", "7"))
	a.NoProfiling = true
	kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
	const said = "the server closed 3 watcher(s) of configmaps in 1m23s between the samples for not keeping up; the evidence could not tie them to a client: no watch of configmaps came back with a new start time in the APF dumps (a client between watches, or no APF dump with request details)"

	code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", a.Address(), "-o", "json")
	if code != ExitFindings {
		t.Errorf("exit %d, want %d (a finding); stderr:\n%s", code, ExitFindings, errOut)
	}
	var r api.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(r.Findings) != 1 {
		t.Fatalf("%d findings, want the one closure: %+v", len(r.Findings), r.Findings)
	}
	f := r.Findings[0]
	if f.Type != api.WatchClosedByServer || f.Severity != api.SeverityCritical || f.Client != nil || len(f.Candidates) != 0 {
		t.Errorf("finding %s %s, client %+v, candidates %v: want a critical WatchClosedByServer naming nobody", f.Type, f.Severity, f.Client, f.CandidateUsers())
	}
	if f.Closures == nil || f.Closures.Closed != 3 || f.Closures.Returns != 0 || f.Closures.Resource != "configmaps" {
		t.Errorf("closures %+v, want 3 of configmaps and no return", f.Closures)
	}
	if f.Message != said {
		t.Errorf("message\n%s\nwant\n%s", f.Message, said)
	}
	if r.Summary.ClosedWatches != 1 {
		t.Errorf("summary counts %d closed watches, want 1", r.Summary.ClosedWatches)
	}

	a2 := fakeapiserver.Start(t, untiedClosureCapture(t, "t1", "4"), untiedClosureCapture(t, "t2", "7"))
	a2.NoProfiling = true
	code, out, errOut = runLive(t, "diagnose", "--kubeconfig", fakeapiserver.Kubeconfig(t, a2, fakeapiserver.TokenAdmin), "--apiserver", a2.Address())
	// The summary says no watch is stuck in the replay (none is), and in
	// the same breath that the server closed one's; the advice says that
	// nothing tied them to a client, and where to look.
	if code != ExitFindings || !containsAll(out, "1 client whose watch the server closed", "the server closed watches of configmaps 3 times", "the evidence could not tie them to a client", "Forcing configmaps watcher close due to unresponsiveness") {
		t.Errorf("exit %d, table without the untied closures:\n%s", code, out)
	}
	for _, bad := range []string{"all clear", "nothing found", "no problem"} {
		if strings.Contains(strings.ToLower(out), bad) {
			t.Errorf("the table says %q though the server closed watches:\n%s", bad, out)
		}
	}
}
