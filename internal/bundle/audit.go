package bundle

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// AuditDir is the directory at a bundle's root where collect keeps the
// watch requests of the audit logs it was given (collect --audit-log),
// and from where analyze reads them as if given with --audit-log.
const AuditDir = "audit-logs"

// StoreAudit writes body, the watch requests of the audit log name, to
// ROOT/AuditDir/<SafeName(base of name)>.jsonl (-2, -3... when taken),
// and returns that path relative to the root, with slashes, as the
// manifest records it.
func (d *Dir) StoreAudit(name string, body io.Reader) (string, error) {
	dir, err := d.path(AuditDir)
	if err != nil {
		return "", err
	}
	if err := d.mkdirAll(dir); err != nil {
		return "", err
	}
	base := SafeName(filepath.Base(name))
	for i := 1; ; i++ {
		file := base + ".jsonl"
		if i > 1 {
			file = fmt.Sprintf("%s-%d.jsonl", base, i)
		}
		path := filepath.Join(dir, file)
		if _, err := os.Lstat(path); err == nil {
			continue
		}
		if err := d.write(path, body, true); err != nil {
			return "", err
		}
		return AuditDir + "/" + file, nil
	}
}

// readAuditDir lists the regular files of a bundle's AuditDir, shown as
// under the path given: they are audit logs, not captures. Anything else
// there is skipped with a warning.
func (ld *loader) readAuditDir(root, shown string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		ld.warn(skipUnreadable, fmt.Sprintf("skipped %s: %v", shown, unwrapPathErr(err)))
		return
	}
	for _, e := range entries {
		p := filepath.Join(shown, e.Name())
		if e.Type()&fs.ModeType != 0 {
			ld.warn(skipIrregular, fmt.Sprintf("skipped %s: not a regular file", p))
			continue
		}
		ld.l.AuditLogs = append(ld.l.AuditLogs, p)
	}
}
