package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// costLine is the summary line of what the run cost an instance.
var costLine = regexp.MustCompile(`(?m)^  cost to (\S+): (\d+) stop-the-world pauses? \(at most ([0-9.]+) ms, ([0-9.]+) ms in all(?:, [0-9.]+ ms of it stopping the world)?\), ([0-9.]+ [KM]iB) read$`)

// diagnose and analyze of a collect bundle say what the run cost each
// instance, in the table's summary and in the JSON. The fake server
// serves t1 then t2, whose pause histograms differ by the pauses of the
// fixture's own capture script.
func TestCostInTheSummaryAndTheJSON(t *testing.T) {
	t.Parallel()
	a := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
	_, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", a.Address())
	m := costLine.FindStringSubmatch(out)
	if m == nil || m[1] != a.Address() || m[2] == "0" {
		t.Fatalf("no cost line for %s in:\n%s\nstderr:\n%s", a.Address(), out, errOut)
	}
	if !strings.Contains(out, "the runtime's histogram is the whole server process's") {
		t.Errorf("the summary does not say the histogram is the whole process's:\n%s", out)
	}
	_, js, _ := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", a.Address(), "-o", "json")
	if !strings.Contains(js, `"pausesMeasured": true`) || !strings.Contains(js, `"bytesRead": `) {
		t.Errorf("the JSON has no measured cost:\n%s", js)
	}

	b := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	kb := fakeapiserver.Kubeconfig(t, b, fakeapiserver.TokenAdmin)
	dir := filepath.Join(t.TempDir(), "bundle")
	if code, _, errOut := runLive(t, "collect", "--kubeconfig", kb, "--apiserver", b.Address(), "-d", dir); code != ExitOK {
		t.Fatalf("collect exit %d:\n%s", code, errOut)
	}
	_, offline, errOut := run(t, nil, "analyze", dir)
	o := costLine.FindStringSubmatch(offline)
	if o == nil || o[1] != b.Address() {
		t.Fatalf("analyze of the bundle shows no cost line for %s:\n%s\n%s", b.Address(), offline, errOut)
	}
	if strings.Join(m[2:5], " ") != strings.Join(o[2:5], " ") {
		t.Errorf("pauses: diagnose %q, analyze %q; want the same", m[2:5], o[2:5])
	}
}
