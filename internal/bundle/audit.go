package bundle

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
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

// AuditSource is an audit log given to a run (api.FileAuditLog): its name
// for messages, and how to open it. The engine opens it when it reads it,
// once: at the end of a live run, so that the requests made during the
// samples are in it.
type AuditSource struct {
	// Name is the log as messages and the events' Source name it: the
	// path as given, "<stdin>", or the bundle's file.
	Name string
	// Open opens the log for reading, once.
	Open func() (io.ReadCloser, error)
	// Head, when set, opens the log for a look at its form before the
	// run reads it whole (the engine's check of a live run's logs, before
	// its first sample); it takes nothing from what Open gives. A log
	// read once (stdin) shows its first HeadBytes; past them its head
	// fails with ErrHeadCut.
	Head func() (io.ReadCloser, error)
}

// HeadBytes is how much of a log read once its head holds.
const HeadBytes = 1 << 20

// ErrHeadCut ends the head of a log read once, when the log goes on.
var ErrHeadCut = errors.New("the head of the log ends here; the rest is read with it")

// AuditFile is the audit log at path, named as given. Its opener refuses
// anything but a regular file (CheckAuditFile) before opening it, and
// again on the file opened, so a path swapped for a named pipe in between
// cannot block the open or the read. Its head is the file, opened again.
func AuditFile(path string) AuditSource {
	open := func() (io.ReadCloser, error) { return openRegular(path) }
	return AuditSource{Name: path, Open: open, Head: open}
}

// AuditStream is an audit log that can be read once (stdin), named name:
// its first HeadBytes are held as they are read, so its head shows them
// and Open still gives them.
func AuditStream(name string, r io.Reader) AuditSource {
	br := bufio.NewReaderSize(r, HeadBytes)
	return AuditSource{Name: name,
		Open: func() (io.ReadCloser, error) { return io.NopCloser(br), nil },
		Head: func() (io.ReadCloser, error) {
			b, err := br.Peek(HeadBytes)
			switch {
			case errors.Is(err, io.EOF):
				return io.NopCloser(bytes.NewReader(b)), nil
			case err != nil:
				return nil, err
			}
			return io.NopCloser(io.MultiReader(bytes.NewReader(b), errReader{ErrHeadCut})), nil
		}}
}

// errReader fails every read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// NotRegularError is an audit log that is not a regular file: a named
// pipe would block the run until a writer came (forever, when none
// does), a device would never end.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	what := "not a regular file"
	switch {
	case e.Mode&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO), not a regular file"
	case e.Mode&fs.ModeDevice != 0:
		what = "a device, not a regular file"
	case e.Mode&fs.ModeSocket != 0:
		what = "a socket, not a regular file"
	case e.Mode.IsDir():
		what = "a directory, not a regular file"
	}
	return fmt.Sprintf("%q is %s: save the log to a file first, or give it on stdin as \"-\"", e.Path, what)
}

// CheckAuditFile refuses path, without opening it, unless it is a regular
// file (or a link to one).
func CheckAuditFile(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return &NotRegularError{Path: path, Mode: st.Mode()}
	}
	return nil
}

// openRegular opens path for reading if it is a regular file: checked
// before the open (a FIFO's open blocks until a writer comes), opened
// without blocking, and checked again on the file opened.
func openRegular(path string) (*os.File, error) {
	if err := CheckAuditFile(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = &NotRegularError{Path: path, Mode: st.Mode()}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
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
		ld.l.AuditLogs = append(ld.l.AuditLogs, AuditSource{Name: p, Open: func() (io.ReadCloser, error) { return openRegular(filepath.Join(root, e.Name())) }})
	}
}
