package watches

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// moduleSource reads files of one k8s.io/apiserver release as `go mod
// download` fetched it: from its directory in the module cache, or from its
// zip when the go command would not extract it (a module asking for a newer
// go than this toolchain, as v0.38.0-beta.0 asks for go 1.27).
type moduleSource struct {
	dir    string
	zip    *zip.ReadCloser
	prefix string // path@version/ inside the zip
}

// downloadRelease runs `go mod download -json k8s.io/apiserver` in the
// release's pin module (hack/shapes/v1.N) and opens what it fetched.
func downloadRelease(t *testing.T, rel release) *moduleSource {
	t.Helper()
	minor := strings.Split(rel.Kube, ".")[1]
	pin := filepath.Join("..", "..", "hack", "shapes", "v1."+minor)
	cmd := exec.Command("go", "mod", "download", "-json", "k8s.io/apiserver")
	cmd.Dir = pin
	// The pin is downloaded, never built: no toolchain switch, and go.sum
	// is the pin's own.
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.Output()
	var m struct{ Version, Dir, Zip, Error string }
	if jerr := json.Unmarshal(out, &m); jerr != nil {
		t.Fatalf("%s: go mod download in %s: %v (%v)", rel.Kube, pin, err, jerr)
	}
	if m.Version != rel.APIServer {
		t.Fatalf("%s: %s pins k8s.io/apiserver %s, the table says %s", rel.Kube, pin, m.Version, rel.APIServer)
	}
	if m.Dir != "" {
		return &moduleSource{dir: m.Dir}
	}
	if m.Zip == "" || !strings.Contains(m.Error, "requires go >=") {
		t.Fatalf("%s: go mod download in %s: %s (%v)", rel.Kube, pin, m.Error, err)
	}
	z, err := zip.OpenReader(m.Zip)
	if err != nil {
		t.Fatalf("%s: %v", rel.Kube, err)
	}
	t.Cleanup(func() { z.Close() })
	return &moduleSource{zip: z, prefix: "k8s.io/apiserver@" + m.Version + "/"}
}

// read returns one file of the module.
func (s *moduleSource) read(file string) ([]byte, error) {
	if s.dir != "" {
		return os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(file)))
	}
	f, err := s.zip.Open(s.prefix + file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// declaration is the regexp of fn's declaration: "pkg.(*T).M" as
// `func (x *T) M(`, "pkg.F" as `func F(`.
func declaration(fn string) (pkg string, re *regexp.Regexp) {
	slash := strings.LastIndexByte(fn, '/')
	dot := slash + strings.IndexByte(fn[slash:], '.')
	pkg, name := fn[:dot], fn[dot+1:]
	if recv, method, ok := strings.Cut(name, ")."); ok {
		recv = strings.TrimPrefix(recv, "(")
		return pkg, regexp.MustCompile(`(?m)^func \(\w+ ` + regexp.QuoteMeta(recv) + `\) ` + regexp.QuoteMeta(method) + `\(`)
	}
	return pkg, regexp.MustCompile(`(?m)^func ` + regexp.QuoteMeta(name) + `\(`)
}

// checkRow returns what is wrong with one row against the release's
// source: its function not declared in the file named, or its cited line
// not holding the text quoted.
func checkRow(src *moduleSource, row upstreamRow) []string {
	var bad []string
	pkg, decl := declaration(row.Func)
	if want := "k8s.io/apiserver/" + filepath.ToSlash(filepath.Dir(row.Decl)); pkg != want {
		bad = append(bad, fmt.Sprintf("%s is in package %s, but %s is in %s", row.Func, pkg, row.Decl, want))
	}
	b, err := src.read(row.Decl)
	if err != nil {
		bad = append(bad, fmt.Sprintf("%s: %v", row.Decl, err))
	} else if !decl.Match(b) {
		bad = append(bad, fmt.Sprintf("%s declares no %s", row.Decl, row.Func))
	}
	file, lineText, _ := strings.Cut(row.Cite, ":")
	line, err := strconv.Atoi(lineText)
	if err != nil {
		return append(bad, fmt.Sprintf("cite %q: want file:line", row.Cite))
	}
	b, err = src.read(file)
	if err != nil {
		return append(bad, fmt.Sprintf("%s: %v", file, err))
	}
	lines := bytes.Split(b, []byte("\n"))
	if line < 1 || line > len(lines) || !bytes.Contains(lines[line-1], []byte(row.Holds)) {
		got := ""
		if line >= 1 && line <= len(lines) {
			got = strings.TrimSpace(string(lines[line-1]))
		}
		bad = append(bad, fmt.Sprintf("%s holds %q, not %q (%s)", row.Cite, got, row.Holds, row.Func))
	}
	return bad
}

// TestShapeContract checks every claimed release's table against that
// release's k8s.io/apiserver source, fetched through its pin module: the
// next upstream refactor of the watcher loop fails here.
func TestShapeContract(t *testing.T) {
	for _, rel := range releases {
		t.Run(rel.Kube, func(t *testing.T) {
			src := downloadRelease(t, rel)
			for _, row := range rel.Rows {
				for _, bad := range checkRow(src, row) {
					t.Errorf("k8s.io/apiserver %s: %s", rel.APIServer, bad)
				}
			}
		})
	}
}

// TestShapeContractCatchesAWrongName checks the check: v1.38's table with
// processInitialEvents misspelt, and a cite off by a line, must fail
// against the real source.
func TestShapeContractCatchesAWrongName(t *testing.T) {
	rel := releases[len(releases)-1]
	src := downloadRelease(t, rel)
	for _, tc := range []struct {
		row  upstreamRow
		want []string
	}{
		{upstreamRow{fnProcessInitialEvents + "X", roleInitialEvents, fileCacheWatcher, fileCacheWatcher + ":585", "c.sendWatchCacheEvent(event)"},
			[]string{"pkg/storage/cacher/cache_watcher.go declares no " + fnProcessInitialEvents + "X"}},
		{upstreamRow{fnProcessInterval, roleIntervalLoop, fileCacheWatcher, fileCacheWatcher + ":502", "c.sendWatchCacheEvent(event)"},
			[]string{"pkg/storage/cacher/cache_watcher.go declares no " + fnProcessInterval,
				`pkg/storage/cacher/cache_watcher.go:502 holds "//   the initialization signal proportionally to the number of events to", not "c.sendWatchCacheEvent(event)" (` + fnProcessInterval + ")"}},
		{upstreamRow{fnSendWatchCacheEvent, roleSend, fileCacheWatcher, fileCacheWatcher + ":463", "case c.result <- *watchEvent:"},
			[]string{`pkg/storage/cacher/cache_watcher.go:463 holds "select {", not "case c.result <- *watchEvent:" (` + fnSendWatchCacheEvent + ")"}},
	} {
		got := checkRow(src, tc.row)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("checkRow(%s) =\n%s\nwant\n%s", tc.row.Func, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}

// TestReleaseTables checks the tables' own consistency: releases oldest
// first, a name means one role in every release, the newest proven release
// is the newest captured one, and every role the classifier reads by is in
// some table.
func TestReleaseTables(t *testing.T) {
	roleOfName := map[string]role{}
	for i, rel := range releases {
		if i > 0 && rel.Kube <= releases[i-1].Kube {
			t.Errorf("releases out of order: %s after %s", rel.Kube, releases[i-1].Kube)
		}
		for _, row := range rel.Rows {
			if r, ok := roleOfName[row.Func]; ok && r != row.Role {
				t.Errorf("%s: %s is role %d, %d elsewhere", rel.Kube, row.Func, row.Role, r)
			}
			roleOfName[row.Func] = row.Role
		}
	}
	if diff := cmp.Diff("v1.38.0-beta.0", newestProven(releases).Kube); diff != "" {
		t.Errorf("newest proven (-want +got):\n%s", diff)
	}
	seen := map[role]bool{}
	for _, r := range roleByName {
		seen[r] = true
	}
	for r := roleIntervalLoop; r <= roleWaitFresh; r++ {
		if !seen[r] {
			t.Errorf("role %d is in no table", r)
		}
	}
}
