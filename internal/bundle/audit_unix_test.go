//go:build unix

package bundle

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A named pipe or a device given as an audit log is refused before it is
// opened for reading, naming the file: opening a FIFO blocks until a
// writer comes, and /dev/zero never ends.
func TestAuditFileRefusesPipesAndDevices(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "audit.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link.log")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{fifo, "a named pipe (FIFO), not a regular file"},
		{link, "a named pipe (FIFO), not a regular file"},
		{"/dev/zero", "a device, not a regular file"},
		{t.TempDir(), "a directory, not a regular file"},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			if err := CheckAuditFile(tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckAuditFile: %v, want %q", err, tc.want)
			}
			rc, err := AuditFile(tc.path).Open()
			if err == nil {
				rc.Close()
			}
			var nr *NotRegularError
			if !errors.As(err, &nr) || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open: %v, want a NotRegularError naming %q: %s", err, tc.path, tc.want)
			}
		})
	}
}

// A named pipe in a bundle's audit-logs/ is skipped with a warning, never
// opened.
func TestAuditDirSkipsAPipe(t *testing.T) {
	root := filepath.Join(t.TempDir(), "b")
	d := &Dir{Root: root}
	if err := d.Claim(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.StoreAudit("audit.log", strings.NewReader("{}\n")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, AuditDir, "pipe.jsonl"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.Store("127.0.0.1:6443", 1, "metrics", strings.NewReader(metricsWithGoroutines)); err != nil {
		t.Fatal(err)
	}
	l, err := Load([]string{root}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.AuditLogs) != 1 || !strings.HasSuffix(l.AuditLogs[0].Name, "audit.log.jsonl") {
		t.Errorf("audit logs: %+v, want audit.log.jsonl alone", l.AuditLogs)
	}
	if w := strings.Join(l.Warnings, "\n"); !strings.Contains(w, "pipe.jsonl: not a regular file") {
		t.Errorf("warnings: want the pipe skipped:\n%s", w)
	}
}
