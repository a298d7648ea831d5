package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// diagnose --contexts --audit-log CONTEXT=FILE joins each context's
// findings to its own log alone; a log without CONTEXT=, or for a context
// not read, is refused before any cluster is read.
func TestFleetAuditLogPerContext(t *testing.T) {
	a := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	b := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	a.NoProfiling, b.NoProfiling = true, true
	kc := writeKubeconfig(t, map[string]string{"prod-a": a.URL, "prod-b": b.URL})
	dir := t.TempDir()
	logA, logB := filepath.Join(dir, "a.log"), filepath.Join(dir, "b.log")
	other := strings.NewReplacer("127.0.0.2", "127.0.1.2", "127.0.0.3", "127.0.1.3").Replace(seedAuditLog(false))
	for p, s := range map[string]string{logA: seedAuditLog(false), logB: other} {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("a log per context", func(t *testing.T) {
		_, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--contexts", "prod-a,prod-b", "-o", "json", "--audit-log", "prod-a="+logA, "--audit-log", "prod-b="+logB)
		var d struct {
			Clusters []struct {
				Context string
				Report  *struct{ Findings []auditFinding }
			}
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("%v\n%s\n%s", err, out, errOut)
		}
		got := map[string]map[string][]string{}
		for _, c := range d.Clusters {
			if c.Report == nil {
				t.Fatalf("%s: no report: %s", c.Context, errOut)
			}
			got[c.Context] = map[string][]string{}
			for _, f := range c.Report.Findings {
				got[c.Context][f.Client.User] = f.Client.SourceIPs
			}
		}
		want := map[string]map[string][]string{
			"prod-a": {"slow-informer": {"127.0.0.2"}, "paced-reader": {"127.0.0.3"}},
			"prod-b": {"slow-informer": {"127.0.1.2"}, "paced-reader": {"127.0.1.3"}},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("source IPs per context (-want +got):\n%s", diff)
		}
	})
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no context named", []string{"--audit-log", logA}, `invalid --audit-log "` + logA + `": with --contexts or --all-contexts give CONTEXT=FILE`},
		{"a context not read", []string{"--audit-log", "prod-c=" + logA}, `context "prod-c" is not read: use one of prod-a, prod-b`},
		{"stdin twice", []string{"--audit-log", "prod-a=-", "--audit-log", "prod-b=-"}, `"-" (stdin) given more than once`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"diagnose", "--kubeconfig", kc, "--contexts", "prod-a,prod-b"}, tc.args...)
			code, _, errOut := runLive(t, args...)
			if code != ExitError || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, ExitError, tc.want)
			}
		})
	}
}
