package model

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func TestStatusErrors(t *testing.T) {
	t.Parallel()
	forbidden := `{"kind":"Status","message":"forbidden: User \"x\" cannot get path \"/debug/pprof/goroutine\""}`
	for _, tc := range []struct {
		status int
		path   string
		body   string
		want   string
	}{
		{403, "/debug/pprof/goroutine", forbidden, `GET /debug/pprof/goroutine forbidden: missing RBAC rule nonResourceURLs: ["/debug/pprof/*"], verbs: ["get"] (forbidden: User "x"`},
		{403, "/metrics", "", `missing RBAC rule nonResourceURLs: ["/metrics"], verbs: ["get"]`},
		{404, "/debug/pprof/goroutine", "404 page not found", "profiling is disabled on this API server (--profiling=false)"},
		{404, "/debug/api_priority_and_fairness/dump_requests", "", "API Priority and Fairness is disabled"},
		{401, "/metrics", "", "the credentials of the kubeconfig were rejected"},
		{503, "/metrics", "<html>\nbusy", "HTTP 503: an HTML page, not a Kubernetes API answer"},
		{429, "/debug/pprof/goroutine", "Too many requests, please try again later.\n", "HTTP 429: API Priority and Fairness is rejecting requests at this priority level"},
	} {
		err := statusError("inst", tc.path, tc.status, []byte(tc.body))
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d %s: %v, want %q", tc.status, tc.path, err, tc.want)
		}
		if IsForbidden(err) != (tc.status == 403) {
			t.Errorf("%d: IsForbidden = %v", tc.status, IsForbidden(err))
		}
	}
}

// TestStatusMessageKeepsTheServersBytes: the reason is the message's (or
// the body's) first line, at most 200 bytes, as the server wrote it:
// ESC, U+202E and tabs are escaped where it is printed (internal/report),
// not here, so -o json keeps the value.
func TestStatusMessageKeepsTheServersBytes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, body, want string }{
		{"status message", `{"kind":"Status","message":"no\u001b[2J \u202eway\tout\nsecond"}`, "no\x1b[2J \u202eway\tout"},
		{"plain body", "  \x1b]0;title\x07\tx\r\nmore\n", "\x1b]0;title\x07\tx"},
		{"long", strings.Repeat("é", 150), strings.Repeat("é", 100) + "..."},
		{"html", "<!DOCTYPE html>\n<p>\x1b", "an HTML page, not a Kubernetes API answer (from a proxy or load balancer in front of the API server?)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := statusMessage([]byte(tc.body)); got != tc.want {
				t.Errorf("statusMessage(%q) = %q, want %q", tc.body, got, tc.want)
			}
		})
	}
}

// ProfileRefusal tells a /debug/pprof refused (404: profiling off; 403:
// RBAC) from every other failure, and the evidence says what was read
// instead, naming the missing rule.
func TestProfileRefusal(t *testing.T) {
	for _, tc := range []struct {
		status int
		path   string
		want   int
	}{
		{404, "/debug/pprof/goroutine?debug=1", 404},
		{403, "/debug/pprof/goroutine?debug=2", 403},
		{403, "/debug/pprof/trace?seconds=5", 403},
		{403, "/metrics", 0},
		{404, "/debug/api_priority_and_fairness/dump_requests", 0},
		{500, "/debug/pprof/goroutine?debug=1", 0},
	} {
		if got := ProfileRefusal(statusError("inst", tc.path, tc.status, nil)); got != tc.want {
			t.Errorf("%d %s: %d, want %d", tc.status, tc.path, got, tc.want)
		}
	}
	ir := InstanceResult{Samples: []api.Sample{{}, {ProfileStatus: 403}}}
	if got, want := ir.EvidenceText(), `APF dump_requests and /metrics only, no goroutine dump or execution trace: /debug/pprof answered 403: missing RBAC rule nonResourceURLs: ["/debug/pprof/*"], verbs: ["get"]`; got != want {
		t.Errorf("evidence %q, want %q", got, want)
	}
}

func TestRuleFor(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]string{
		"/debug/pprof/goroutine?debug=2":                 `nonResourceURLs: ["/debug/pprof/*"], verbs: ["get"]`,
		"/debug/pprof/trace?seconds=5":                   `nonResourceURLs: ["/debug/pprof/*"], verbs: ["get"]`,
		"/debug/api_priority_and_fairness/dump_requests": `nonResourceURLs: ["/debug/api_priority_and_fairness/*"], verbs: ["get"]`,
		"/metrics":      `nonResourceURLs: ["/metrics"], verbs: ["get"]`,
		"/version":      `nonResourceURLs: ["/version"], verbs: ["get"]`,
		"/metrics/slis": `nonResourceURLs: ["/metrics/slis"], verbs: ["get"]`,
		"/debug/pprofx": `nonResourceURLs: ["/debug/pprofx"], verbs: ["get"]`,
	} {
		if got := ruleFor(path).String(); got != want {
			t.Errorf("ruleFor(%q) = %s, want %s", path, got, want)
		}
	}
}

// TestClusterRoleGrantsExactlyTheRules: the ClusterRole printed on a
// refusal holds every rule and nothing else.
func TestClusterRoleGrantsExactlyTheRules(t *testing.T) {
	t.Parallel()
	var got []string
	var cur []string
	for _, l := range strings.Split(strings.SplitN(ClusterRole, "rules:\n", 2)[1], "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue // a comment saying what a rule is for
		}
		if strings.HasPrefix(l, "- ") && cur != nil {
			got = append(got, strings.Join(cur, ", "))
			cur = nil
		}
		if l = strings.TrimPrefix(strings.TrimSpace(l), "- "); l != "" {
			cur = append(cur, l)
		}
	}
	got = append(got, strings.Join(cur, ", "))
	var want []string
	for _, r := range Rules() {
		want = append(want, r.String())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ClusterRole rules (-want +got):\n%s", diff)
	}
}

// TestErrorBodiesKeepTheirValue: the error body of a failed debug GET
// reaches the error text as the server wrote it (its first line): the
// manifest and -o json keep the value, and the printers escape it
// (internal/cli's TestErrorBodiesAreEscapedWherePrinted).
func TestErrorBodiesKeepTheirValue(t *testing.T) {
	t.Parallel()
	body := "boom\x1b[31m red\x07\r\u009b2J\there\nsecond line"
	_, c := hostileClient(t, "/debug/pprof/goroutine?debug=1", &fakeapiserver.Hostility{Kind: fakeapiserver.ErrorBody, Body: body})
	resp, err := c.Get(context.Background(), "/debug/pprof/goroutine?debug=1")
	if err == nil {
		resp.Close()
		t.Fatal("GET of a 500 succeeded")
	}
	if got, want := err.Error(), "HTTP 500: boom\x1b[31m red\x07\r\u009b2J\there"; !strings.HasSuffix(got, want) {
		t.Errorf("error %q, want it to end in %q", got, want)
	}
}
