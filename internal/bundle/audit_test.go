package bundle

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// StoreAudit keeps two logs of one name apart, and Load lists the files
// of a bundle's audit-logs directory as audit logs, not as captures:
// nothing there is skipped as unrecognised, and a directory inside it is.
func TestAuditLogsInABundle(t *testing.T) {
	root := filepath.Join(t.TempDir(), "b")
	d := &Dir{Root: root}
	if err := d.Claim(); err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, name := range []string{"/var/log/a/audit.log", "/var/log/b/audit.log", "../x"} {
		f, err := d.StoreAudit(name, strings.NewReader("{}\n"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if diff := cmp.Diff([]string{"audit-logs/audit.log.jsonl", "audit-logs/audit.log-2.jsonl", "audit-logs/x.jsonl"}, files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if err := os.Mkdir(filepath.Join(root, AuditDir, "nested"), DirPerm); err != nil {
		t.Fatal(err)
	}
	if err := d.Store("127.0.0.1:6443", 1, "metrics", strings.NewReader(metricsWithGoroutines)); err != nil {
		t.Fatal(err)
	}
	l, err := Load([]string{root}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, src := range l.AuditLogs {
		got = append(got, filepath.ToSlash(strings.TrimPrefix(src.Name, root+string(filepath.Separator))))
		rc, err := src.Open()
		if err != nil {
			t.Fatalf("%s: %v", src.Name, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(b) != "{}\n" {
			t.Errorf("%s: read %q, %v; want what StoreAudit wrote", src.Name, b, err)
		}
	}
	if diff := cmp.Diff([]string{"audit-logs/audit.log-2.jsonl", "audit-logs/audit.log.jsonl", "audit-logs/x.jsonl"}, got); diff != "" {
		t.Errorf("Loaded.AuditLogs (-want +got):\n%s", diff)
	}
	w := strings.Join(l.Warnings, "\n")
	if !strings.Contains(w, "nested: not a regular file") || strings.Contains(w, "jsonl") {
		t.Errorf("warnings: want the nested directory skipped, no log:\n%s", w)
	}
}

// metricsWithGoroutines is a /metrics body Load recognises.
const metricsWithGoroutines = "# TYPE go_goroutines gauge\ngo_goroutines 12\n"
