package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// A server that serves no /debug/pprof (404: --profiling=false; 403: RBAC
// without the /debug/pprof/* rule) still serves its APF dumps and
// /metrics. diagnose, and collect then analyze, name every watch
// initializing past the stall bound on both samples (the real seed-repro
// t1 and t2) as undecided with the reason, exit 2 (never 0), never advise
// --force, and say that no dump was read.
func TestWithoutProfiling(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		set    func(*fakeapiserver.Server)
		reason string
		why    string
	}{
		{"profiling off (404)", func(s *fakeapiserver.Server) { s.NoProfiling = true }, "ProfilingDisabled",
			"/debug/pprof answered 404: profiling is disabled on this API server (--profiling=false)"},
		{"RBAC refuses /debug/pprof (403)", func(s *fakeapiserver.Server) { s.ForbidProfiling = true }, "ProfilingForbidden",
			`/debug/pprof answered 403: missing RBAC rule nonResourceURLs: ["/debug/pprof/*"], verbs: ["get"]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Each run reads its own server: t1, then t2.
			start := func(t *testing.T) (*fakeapiserver.Server, string) {
				a := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
				tc.set(a)
				return a, fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
			}
			t.Run("diagnose", func(t *testing.T) {
				t.Parallel()
				a, kc := start(t)
				code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", a.Address(), "-o", "json")
				checkWithoutProfiling(t, code, out, errOut, tc.reason, tc.why)
			})
			t.Run("diagnose, table", func(t *testing.T) {
				t.Parallel()
				a, kc := start(t)
				code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", a.Address())
				if code != ExitError {
					t.Errorf("exit %d, want %d", code, ExitError)
				}
				for _, bad := range []string{"--force", "debug=2 dumps", "nothing diagnosed", "0 cacheWatchers"} {
					if strings.Contains(out+errOut, bad) {
						t.Errorf("output says %q:\n%s\n%s", bad, out, errOut)
					}
				}
				if !containsAll(out, "slow-informer", "paced-reader", "evidence on "+a.Address()+": APF dump_requests and /metrics only") {
					t.Errorf("table lacks the rows or the evidence:\n%s", out)
				}
			})
			t.Run("collect then analyze", func(t *testing.T) {
				t.Parallel()
				a, kc := start(t)
				dir := filepath.Join(t.TempDir(), "bundle")
				if code, _, errOut := runLive(t, "collect", "--kubeconfig", kc, "--apiserver", a.Address(), "-d", dir); code == ExitOK && errOut == "" {
					t.Fatalf("collect exit 0 with nothing said though /debug/pprof was refused")
				}
				code, out, errOut := run(t, nil, "analyze", dir, "-o", "json")
				checkWithoutProfiling(t, code, out, errOut, tc.reason, tc.why)
			})
		})
	}
}

func checkWithoutProfiling(t *testing.T, code int, out, errOut, reason, why string) {
	t.Helper()
	if code != ExitError {
		t.Errorf("exit %d, want %d (incomplete); stderr:\n%s", code, ExitError, errOut)
	}
	if strings.Contains(errOut, "--force") {
		t.Errorf("advises --force where no profile endpoint exists:\n%s", errOut)
	}
	var r struct {
		APIServers []struct {
			DumpFormat string `json:"dumpFormat"`
			Evidence   string `json:"evidence"`
		} `json:"apiservers"`
		Findings []struct {
			finding
			Client struct {
				User          string `json:"user"`
				Resource      string `json:"resource"`
				PriorityLevel string `json:"priorityLevel"`
				Seats         int    `json:"seats"`
			} `json:"client"`
			Evidence []string `json:"evidence"`
		} `json:"findings"`
		Incomplete []string `json:"incomplete"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var users []string
	for _, f := range r.Findings {
		if f.Type != "UndecidedInitialEvents" || f.UndecidedReason != reason {
			t.Errorf("finding %s (%s), want UndecidedInitialEvents (%s)", f.Type, f.UndecidedReason, reason)
		}
		if f.Client.Resource != "pods" || f.Client.PriorityLevel != "global-default" || f.Client.Seats != 1 {
			t.Errorf("client %+v, want pods in global-default, 1 seat", f.Client)
		}
		if !slices.ContainsFunc(f.Evidence, func(e string) bool {
			return strings.Contains(e, "1m6s old at 10:23:09, 2m29s old at 10:24:32; initializing past the 30s stall bound on every sample")
		}) {
			t.Errorf("evidence lacks the ages across the samples: %q", f.Evidence)
		}
		users = append(users, f.Client.User)
	}
	slices.Sort(users)
	if diff := cmp.Diff([]string{"paced-reader", "slow-informer"}, users); diff != "" {
		t.Errorf("undecided rows (-want +got):\n%s", diff)
	}
	if len(r.APIServers) != 1 || r.APIServers[0].DumpFormat != "apf" {
		t.Fatalf("servers %+v, want one read from APF and /metrics", r.APIServers)
	}
	if got := r.APIServers[0].Evidence; got != "APF dump_requests and /metrics only, no goroutine dump or execution trace: "+why {
		t.Errorf("evidence %q, want what was read and why", got)
	}
	if len(r.Incomplete) != 1 {
		t.Errorf("incomplete %q, want one line", r.Incomplete)
	}
}
