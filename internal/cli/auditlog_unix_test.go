//go:build unix

package cli

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// A named pipe or a device as --audit-log is refused, naming it, before
// anything is opened or fetched: analyze, diagnose and collect used to
// hang forever on a FIFO.
func TestAuditLogRefusesPipesAndDevices(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "audit.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	a := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
	for _, log := range []struct{ path, what string }{{fifo, "a named pipe (FIFO), not a regular file"}, {"/dev/zero", "a device, not a regular file"}} {
		for _, args := range [][]string{
			{"analyze", golden.Fixture("t2")},
			{"diagnose", "--kubeconfig", kc, "--apiserver", a.Address()},
			{"collect", "--kubeconfig", kc, "--apiserver", a.Address(), "-d", filepath.Join(t.TempDir(), "b")},
		} {
			t.Run(args[0]+" "+filepath.Base(log.path), func(t *testing.T) {
				before := len(a.Requests())
				code, _, errOut := runLive(t, append(args, "--audit-log", log.path)...)
				want := `invalid --audit-log: "` + log.path + `" is ` + log.what
				if code != ExitError || !strings.Contains(errOut, want) {
					t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, ExitError, want)
				}
				if n := len(a.Requests()) - before; n > 0 {
					t.Errorf("%d requests sent before the refusal", n)
				}
			})
		}
	}
}
