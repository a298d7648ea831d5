package cli

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// auditLine is one audit.k8s.io/v1 Event line as kube-apiserver's JSON log
// backend writes it.
func auditLine(id, user, ip, ua, received string) string {
	return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"` + id + `","stage":"ResponseStarted","requestURI":"/api/v1/namespaces/rand2/pods?allowWatchBookmarks=true\u0026resourceVersion=0\u0026resourceVersionMatch=NotOlderThan\u0026sendInitialEvents=true\u0026timeoutSeconds=3600\u0026watch=true","verb":"watch","user":{"username":"` + user +
		`"},"sourceIPs":["` + ip + `"],"userAgent":"` + ua + `","objectRef":{"resource":"pods","namespace":"rand2","apiVersion":"v1"},"requestReceivedTimestamp":"` + received + `","stageTimestamp":"` + received + `"}` + "\n"
}

// The audit log of the seed workload: slow-informer and paced-reader
// from their own addresses, healthy-client watching too (its row is not
// executing in APF, so it is in no finding), and a second request of
// paced-reader received within the tolerance (two fit: ambiguous).
func seedAuditLog(pacedTwice bool) string {
	s := auditLine("a1", "slow-informer", "127.0.0.2", "slow-informer/v0.37.2", "2026-11-29T10:22:03.339100Z") +
		auditLine("a2", "paced-reader", "127.0.0.3", "paced-reader/v0.37.2", "2026-11-29T10:22:03.308800Z") +
		auditLine("a3", "healthy-client", "127.0.0.4", "healthy-client/v0.37.2", "2026-11-29T10:22:03.310000Z")
	if pacedTwice {
		s += auditLine("a4", "paced-reader", "127.0.0.5", "paced-reader/v0.37.2", "2026-11-29T10:22:04.000000Z")
	}
	return s
}

type auditFinding struct {
	Client struct {
		User      string   `json:"user"`
		SourceIPs []string `json:"sourceIPs"`
		UserAgent string   `json:"userAgent"`
	} `json:"client"`
	Audit []struct {
		Source    string   `json:"source"`
		SourceIPs []string `json:"sourceIPs"`
	} `json:"audit"`
}

// analyze --audit-log joins each finding's request to its audit event:
// source address and user agent, from a plain file, a gzipped one or
// stdin; two events fitting one request keep the ambiguity.
func TestAnalyzeAuditLog(t *testing.T) {
	t2 := golden.Fixture("t2")
	dir := t.TempDir()
	plain := filepath.Join(dir, "audit.log")
	if err := os.WriteFile(plain, []byte(seedAuditLog(false)), 0o600); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(seedAuditLog(true)))
	zw.Close()
	zipped := filepath.Join(dir, "audit.log.gz")
	if err := os.WriteFile(zipped, gz.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	// The APF dump and /metrics alone (a server with profiling off): one
	// finding per executing watch row, each naming its request.
	inputs := []string{filepath.Join(t2, "apf-requests.txt"), filepath.Join(t2, "metrics.txt"), filepath.Join(t2, "captured-at.txt")}
	tests := []struct {
		name  string
		flag  string
		stdin string
		want  map[string][]string // user -> source IPs of the client
		fits  map[string]int
	}{
		{"plain", plain, "", map[string][]string{"slow-informer": {"127.0.0.2"}, "paced-reader": {"127.0.0.3"}}, map[string]int{"slow-informer": 1, "paced-reader": 1}},
		{"stdin", "-", seedAuditLog(false), map[string][]string{"slow-informer": {"127.0.0.2"}, "paced-reader": {"127.0.0.3"}}, map[string]int{"slow-informer": 1, "paced-reader": 1}},
		{"gzipped, paced-reader twice", zipped, "", map[string][]string{"slow-informer": {"127.0.0.2"}, "paced-reader": nil}, map[string]int{"slow-informer": 1, "paced-reader": 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"analyze", "-o", "json", "--audit-log", tc.flag}, inputs...)
			code, out, errOut := run(t, []byte(tc.stdin), args...)
			if code != ExitError {
				t.Errorf("exit %d, want %d; stderr %s", code, ExitError, errOut)
			}
			var r struct{ Findings []auditFinding }
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			got, fits := map[string][]string{}, map[string]int{}
			for _, f := range r.Findings {
				got[f.Client.User] = f.Client.SourceIPs
				fits[f.Client.User] = len(f.Audit)
				if len(f.Client.SourceIPs) > 0 && f.Client.UserAgent != f.Client.User+"/v0.37.2" {
					t.Errorf("%s: user agent %q", f.Client.User, f.Client.UserAgent)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("source IPs per finding (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.fits, fits); diff != "" {
				t.Errorf("audit events per finding (-want +got):\n%s", diff)
			}
			if strings.Contains(out, "127.0.0.4") {
				t.Errorf("the healthy client's address is in a finding:\n%s", out)
			}
		})
	}
}

// Bad --audit-log input fails naming the file; stdin is read once.
func TestAuditLogErrors(t *testing.T) {
	t2 := golden.Fixture("t2")
	dir := t.TempDir()
	// Not an audit log (an APF dump, with a terminal escape).
	unknown := filepath.Join(dir, "apf.txt")
	if err := os.WriteFile(unknown, []byte("PriorityLevelName,\x1b[31m FlowSchemaName\nexempt, exempt\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing", []string{"analyze", t2, "--audit-log", filepath.Join(dir, "nope")}, fmt.Sprintf("invalid --audit-log %q: no such file or directory", filepath.Join(dir, "nope"))},
		{"a directory", []string{"analyze", t2, "--audit-log", dir}, "is a directory, not a regular file"},
		{"stdin twice", []string{"analyze", "-", "--audit-log", "-"}, `"-" (stdin) given more than once`},
		{"no known format", []string{"analyze", t2, "--audit-log", unknown}, `reading audit log: ` + unknown + ` is in no audit log format read here (kube-apiserver JSON lines`},
		{"no known format, first bytes escaped", []string{"analyze", t2, "--audit-log", unknown}, `it starts "PriorityLevelName,\x1b[31m`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := run(t, nil, tc.args...)
			if code != ExitError || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tc.want)
			}
		})
	}
}

// diagnose --audit-log joins the live findings the same way (profiling
// off: the APF rows are the findings).
func TestDiagnoseAuditLog(t *testing.T) {
	a := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	a.NoProfiling = true
	kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
	p := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(p, []byte(seedAuditLog(false)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", a.Address(), "-o", "json", "--audit-log", p)
	if code != ExitError {
		t.Errorf("exit %d, stderr %s", code, errOut)
	}
	checkSeedSources(t, out, "")
}

// diagnose --audit-log names the pod holding each finding's source
// address (a pods list by status.podIP), and says who else it could be
// when several pods share the address; without the pods rule it says
// which rule is missing and keeps the addresses.
func TestDiagnoseAuditLogNamesThePod(t *testing.T) {
	p := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(p, []byte(seedAuditLog(false)), 0o600); err != nil {
		t.Fatal(err)
	}
	type pod struct{ Namespace, Name, IP, Owner string }
	run := func(t *testing.T, forbid bool) (map[string][]pod, string, string) {
		a := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
		a.NoProfiling = true
		a.ForbidPods = forbid
		a.Pods = []corev1.Pod{
			fakeapiserver.Pod("team-a", "informer-7d9f-x2k4q", "127.0.0.2", "ReplicaSet/informer-7d9f", false),
			fakeapiserver.Pod("kube-system", "agent-a", "127.0.0.3", "DaemonSet/agent", true),
			fakeapiserver.Pod("kube-system", "proxy-b", "127.0.0.3", "", true),
			fakeapiserver.Pod("team-b", "other", "127.0.0.9", "", false),
		}
		kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
		code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", a.Address(), "-o", "json", "--audit-log", p)
		if code != ExitError {
			t.Errorf("exit %d, stderr %s", code, errOut)
		}
		var r struct {
			Findings []struct {
				Client struct {
					User string
					Pods []pod
				}
				Evidence []string
			}
			Warnings []string
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		got := map[string][]pod{}
		var ev string
		for _, f := range r.Findings {
			got[f.Client.User] = f.Client.Pods
			ev += strings.Join(f.Evidence, "\n") + "\n"
		}
		return got, ev, strings.Join(r.Warnings, "\n")
	}
	t.Run("named", func(t *testing.T) {
		got, ev, _ := run(t, false)
		want := map[string][]pod{
			"slow-informer": {{"team-a", "informer-7d9f-x2k4q", "127.0.0.2", "ReplicaSet/informer-7d9f"}},
			"paced-reader":  {{"kube-system", "agent-a", "127.0.0.3", "DaemonSet/agent"}, {"kube-system", "proxy-b", "127.0.0.3", ""}},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("pods (-want +got):\n%s", diff)
		}
		for _, s := range []string{
			"pod team-a/informer-7d9f-x2k4q (ReplicaSet/informer-7d9f) holds source address 127.0.0.2",
			"source address 127.0.0.3 is held by 2 pods (host network: they share their node's address): kube-system/agent-a (DaemonSet/agent), kube-system/proxy-b; any of them may hold the watch",
		} {
			if !strings.Contains(ev, s) {
				t.Errorf("evidence lacks %q:\n%s", s, ev)
			}
		}
	})
	t.Run("forbidden", func(t *testing.T) {
		got, _, warnings := run(t, true)
		for u, ps := range got {
			if len(ps) != 0 {
				t.Errorf("%s: pods %v from a refused list", u, ps)
			}
		}
		if want := `missing RBAC rule apiGroups: [""], resources: ["pods"], verbs: ["list"]`; !strings.Contains(warnings, want) {
			t.Errorf("warnings do not name the rule %q:\n%s", want, warnings)
		}
	})
}

// collect --audit-log keeps the log's watch requests in the bundle, and
// analyze of the bundle joins them as --audit-log does: the same source
// addresses as diagnose --audit-log.
func TestCollectKeepsTheAuditLog(t *testing.T) {
	a := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	a.NoProfiling = true
	kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
	p := filepath.Join(t.TempDir(), "audit.log")
	// Other verbs and a line that is no event are not kept.
	other := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"l1","stage":"ResponseComplete","requestURI":"/api/v1/pods","verb":"list","user":{"username":"u"},"requestReceivedTimestamp":"2026-11-29T10:22:00Z"}` + "\nnot an event\n"
	if err := os.WriteFile(p, []byte(other+seedAuditLog(false)), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "b")
	// Exit 2: profiling is off, so the bundle holds no goroutine dump.
	if code, _, errOut := runLive(t, "collect", "--kubeconfig", kc, "--apiserver", a.Address(), "-d", dir, "--audit-log", p); code != ExitError || !strings.Contains(errOut, "profiling is disabled") {
		t.Fatalf("collect exit %d: %s", code, errOut)
	}
	var m api.Manifest
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		t.Fatal(err)
	}
	want := []api.AuditLogCopy{{Source: p, File: "audit-logs/audit.log.jsonl", Watches: 3, Lines: 5}}
	if diff := cmp.Diff(want, m.AuditLogs); diff != "" {
		t.Errorf("manifest auditLogs (-want +got):\n%s", diff)
	}
	code, out, errOut := run(t, nil, "analyze", dir, "-o", "json")
	if code != ExitError {
		t.Errorf("analyze exit %d, stderr %s", code, errOut)
	}
	checkSeedSources(t, out, " from the bundle's copy")
	if strings.Contains(errOut, "skipped") {
		t.Errorf("analyze skipped part of the bundle:\n%s", errOut)
	}
}

// checkSeedSources checks that the JSON report out gives slow-informer and
// paced-reader the source addresses of seedAuditLog(false).
func checkSeedSources(t *testing.T, out, from string) {
	t.Helper()
	var r struct{ Findings []auditFinding }
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, f := range r.Findings {
		got[f.Client.User] = f.Client.SourceIPs
	}
	if diff := cmp.Diff(map[string][]string{"slow-informer": {"127.0.0.2"}, "paced-reader": {"127.0.0.3"}}, got); diff != "" {
		t.Errorf("source IPs%s (-want +got):\n%s", from, diff)
	}
}

// collect and diagnose --audit-log with a log in no known format exit 2
// with the error before any request (not after the sampling window), and
// collect claims no directory; a log without a watch request is recorded
// without a file, and analyze reads that bundle.
func TestCollectAuditLogUnread(t *testing.T) {
	a := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
	dir := t.TempDir()
	unknown, lists := filepath.Join(dir, "unknown.log"), filepath.Join(dir, "lists.log")
	list := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"l1","stage":"ResponseComplete","requestURI":"/api/v1/pods","verb":"list","user":{"username":"u"},"requestReceivedTimestamp":"2026-11-29T10:22:00Z"}` + "\n"
	for p, s := range map[string]string{unknown: "hello\x00world\n", lists: list} {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("no known format", func(t *testing.T) {
		b := filepath.Join(t.TempDir(), "b")
		for _, args := range [][]string{
			{"collect", "--kubeconfig", kc, "--apiserver", a.Address(), "-d", b, "--audit-log", unknown},
			{"diagnose", "--kubeconfig", kc, "--apiserver", a.Address(), "--samples", "2", "--audit-log", unknown},
		} {
			code, _, errOut := runLive(t, args...)
			if want := "reading audit log: " + unknown + ` is in no audit log format read here`; code != ExitError || !strings.Contains(errOut, want) || !strings.Contains(errOut, `it starts "hello\x00world`) {
				t.Errorf("%s: exit %d, stderr %q; want %d and %q", args[0], code, errOut, ExitError, want)
			}
		}
		if got := a.Requests(); len(got) != 0 {
			t.Errorf("requests before the log was refused: %q, want none", got)
		}
		if _, err := os.Stat(b); !os.IsNotExist(err) {
			t.Errorf("collect claimed %s (%v), want no directory", b, err)
		}
	})
	t.Run("no watch request", func(t *testing.T) {
		b := filepath.Join(t.TempDir(), "b")
		if code, _, errOut := runLive(t, "collect", "--kubeconfig", kc, "--apiserver", a.Address(), "-d", b, "--audit-log", lists); code != ExitOK {
			t.Fatalf("collect exit %d: %s", code, errOut)
		}
		var m api.Manifest
		raw, err := os.ReadFile(filepath.Join(b, "manifest.json"))
		if err == nil {
			err = json.Unmarshal(raw, &m)
		}
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]api.AuditLogCopy{{Source: lists, Watches: 0, Lines: 1}}, m.AuditLogs); diff != "" {
			t.Errorf("manifest auditLogs (-want +got):\n%s", diff)
		}
		if code, _, errOut := run(t, nil, "analyze", b); code == ExitError {
			t.Errorf("analyze exit %d: %s", code, errOut)
		}
	})
}
