package bundle

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// inside resolves the walked entry path under root: the file to read,
// or why it is skipped (and that reason's kind). Only regular files, and
// links to regular files under root, are read.
func inside(root, path string, d fs.DirEntry) (target, kind, why string) {
	if d.Type()&fs.ModeSymlink == 0 {
		if !d.Type().IsRegular() {
			return "", skipIrregular, "not a regular file"
		}
		return path, "", ""
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", skipUnreadable, fmt.Sprintf("a link that cannot be followed: %v", unwrapPathErr(err))
	}
	if rel, err := filepath.Rel(root, resolved); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", skipLinkOut, "a link to a file outside the directory is not read"
	}
	st, err := os.Stat(resolved)
	switch {
	case err != nil:
		return "", skipUnreadable, unwrapPathErr(err).Error()
	case st.IsDir():
		// Linked directories are not followed (no loops).
		return "", skipLinkDir, "a link to a directory is not followed; name it on the command line"
	case !st.Mode().IsRegular():
		return "", skipIrregular, "a link to something other than a regular file"
	}
	return resolved, "", ""
}

// OpenIn opens the entry d at path, met reading the directory root, by
// the rules Load walks by: a regular file, or a link to a regular file
// under root. Otherwise f is nil and skip says why, naming neither the
// link's target nor its content. root must have no symlinks in it
// (filepath.EvalSymlinks).
func OpenIn(root, path string, d fs.DirEntry) (f *os.File, skip string, err error) {
	target, _, why := inside(root, path, d)
	if why != "" {
		return nil, why, nil
	}
	f, err = os.Open(target)
	if err != nil {
		return nil, "", fmt.Errorf("reading %q: %w", path, unwrapPathErr(err))
	}
	return f, "", nil
}
