package bundle

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/watch-doctor/watch-doctor/internal/bounded"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// readPath reads one path given to Load: stdin ("-"), a file (into the
// command line's capture) or a directory (walked).
func (ld *loader) readPath(p string) error {
	opts := ld.opts
	if p != "-" {
		clean := filepath.Clean(p)
		if ld.given[clean] {
			ld.warn(skipTwice, fmt.Sprintf("%q given twice: read once", p))
			return nil
		}
		ld.given[clean] = true
	}
	if p == "-" {
		if ld.stdinUsed {
			return errors.New("\"-\" (stdin) given twice")
		}
		ld.stdinUsed = true
		if opts.Stdin == nil {
			return errors.New("\"-\": no standard input")
		}
		ld.explicitName = mergeName(ld.explicitName, "-")
		return ld.loadReader(ld.capture(explicitKey, ""), "-", "<stdin>", opts.Stdin)
	}
	st, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("reading %q: %w", p, unwrapPathErr(err))
	}
	if !st.IsDir() {
		ld.explicitName = mergeName(ld.explicitName, filepath.Dir(p))
		return ld.loadFile(ld.capture(explicitKey, ""), p, p)
	}
	return ld.walkDir(p)
}

// walkDir reads every regular file under the directory p into the capture
// of its directory; what cannot be read is skipped with a warning. A link
// is read only when it names a regular file inside the directory: a link
// out of it (a token file, /etc/shadow) is never opened, and its warning
// names the link alone.
func (ld *loader) walkDir(p string) error {
	// A symlink to a directory is read as the directory it names.
	root, err := filepath.EvalSymlinks(p)
	if err != nil {
		return fmt.Errorf("reading %q: %w", p, unwrapPathErr(err))
	}
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if cerr := ld.ctx.Err(); cerr != nil {
			return cerr
		}
		shown := filepath.Join(p, strings.TrimPrefix(path, root))
		if err != nil {
			ld.warn(skipUnreadable, fmt.Sprintf("skipped %s: %v", shown, unwrapPathErr(err)))
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if d.Name() == AuditDir && filepath.Dir(path) == root {
				ld.readAuditDir(path, shown)
				return fs.SkipDir
			}
			return nil
		}
		if d.Name() == LockName {
			ld.warn(skipLock, fmt.Sprintf("skipped %s: collect's lock: the bundle is still being written, or collect was interrupted before it finished", shown))
			return nil
		}
		target, kind, why := inside(root, path, d)
		if why != "" {
			ld.warn(kind, fmt.Sprintf("skipped %s: %s", shown, why))
			return nil
		}
		dir := filepath.Dir(shown)
		err = ld.loadFile(ld.capture(dir, dir), target, shown)
		switch {
		case errors.Is(err, ErrUnknownKind):
			ld.warn(skipUnknown, fmt.Sprintf("skipped %s: %v", shown, errors.Unwrap(err)))
			return nil
		case errors.Is(err, ErrEmpty):
			ld.warn(skipEmpty, fmt.Sprintf("skipped %s: an empty file", shown))
			return nil
		}
		return err
	})
}

// Kinds of skipped inputs, for warnings summarised per kind.
const (
	skipUnreadable = "unreadable"
	skipUnknown    = "unrecognized content"
	skipEmpty      = "empty"
	skipIrregular  = "not a regular file"
	skipLinkDir    = "a link to a directory"
	skipLinkOut    = "a link out of the directory"
	skipLock       = "collect's lock"
	skipTwice      = "given twice"
	skipNoCapture  = "no goroutine dump, APF dump or metrics"
)

// warn records a warning of the walk, summarised per kind (english.Summary).
func (ld *loader) warn(kind, msg string) {
	ld.skips.Add(kind, msg)
}

// mergeName names the capture of the files given on the command line: their
// directory when they share one.
func mergeName(cur, dir string) string {
	switch {
	case cur == "":
		return dir
	case cur == dir:
		return cur
	}
	return "command line"
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

func captureNames(cs []*Capture) string {
	var ns []string
	for _, c := range cs {
		ns = append(ns, c.Name)
	}
	return strings.Join(ns, ", ")
}

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// loadFile reads the file at path, shown as name, into c.
func (ld *loader) loadFile(c *Capture, path, name string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading %q: %w", name, unwrapPathErr(err))
	}
	defer f.Close()
	return ld.loadReader(c, path, name, f)
}

// loadReader detects and parses one input into c. name is used in errors.
func (ld *loader) loadReader(c *Capture, path, name string, r io.Reader) error {
	kind, br, err := Open(ctxReader{ld.ctx, r})
	if err != nil {
		if errors.Is(err, ErrUnknownKind) || errors.Is(err, ErrEmpty) {
			return fmt.Errorf("%s: %w", name, err)
		}
		return fmt.Errorf("%s: %v", name, err)
	}
	if kind == api.FileManifest {
		ld.manifests = append(ld.manifests, path)
		return nil
	}
	// Bounded after decompression; past the bound the parser's own error
	// (or its early stop) is replaced by the one naming the bound.
	lr := bounded.NewReader(br, ld.opts.limit(kind), name, "a "+string(kind)+" file")
	err = c.Read(kind, name, lr)
	if tl := lr.Exceeded(); tl != nil {
		delete(c.files, kind)
		if kind == api.FileGoroutineDebug2 && ld.opts.Words.MaxDumpSize != "" {
			return fmt.Errorf("%w (raise the bound with %s)", tl, ld.opts.Words.MaxDumpSize)
		}
		return tl
	}
	return err
}

func applyManifest(l *Loaded, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading %q: %w", path, unwrapPathErr(err))
	}
	defer f.Close()
	m, err := ReadManifest(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if m.Coverage != nil {
		l.Coverage = append(l.Coverage, *m.Coverage)
	}
	root := filepath.Dir(path)
	byDir := map[string]*Capture{}
	for _, c := range l.Captures {
		byDir[filepath.Clean(c.Name)] = c
	}
	for _, inst := range m.Instances {
		l.Instances = append(l.Instances, inst)
		if inst.Error != "" {
			l.Warnings = append(l.Warnings, fmt.Sprintf("%s: instance %s was not read: %s", path, inst.Name, inst.Error))
		}
		for _, s := range inst.Samples {
			dir := filepath.Join(root, filepath.FromSlash(s.Dir))
			c, ok := byDir[filepath.Clean(dir)]
			if !ok {
				l.Warnings = append(l.Warnings, fmt.Sprintf("%s: sample directory %s of %s holds no readable capture", path, s.Dir, inst.Name))
				continue
			}
			c.Instance, c.manifest = inst.Name, path
			if c.Version == "" {
				c.Version = inst.Version
			}
			c.CapturedAt, c.CapturedAtSource = s.CapturedAt, "manifest"
			c.Mixed = s.Mixed
			c.Withheld = s.Withheld
			c.ProfileStatus = s.ProfileStatus
			for _, fi := range s.Fetches {
				if fi.Kind == api.FileMetrics && fi.Error == "" {
					c.MetricsAt = fi.StartedAt
					if fi.ServerDate != nil {
						c.MetricsAt = *fi.ServerDate
					}
				}
				if fi.Kind == api.FileGoroutineDebug2 && fi.Error == "" {
					c.CapturedAt = fi.StartedAt
					if fi.ServerDate != nil {
						c.CapturedAt, c.CapturedAtSource = *fi.ServerDate, "manifest (server Date header)"
					}
				}
				if fi.Error != "" {
					l.Warnings = append(l.Warnings, fmt.Sprintf("%s: %s %s: %s", inst.Name, s.Dir, fi.Path, fi.Error))
				}
			}
		}
	}
	for _, n := range m.Notes {
		l.Warnings = append(l.Warnings, n)
	}
	return nil
}
