package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// buildPaths rewrites the frame paths of a module build's dump into those
// of another build of the same code.
type buildPaths struct {
	// funcPrefix and filePrefix are put before the import path of each
	// rewritten function name and file path (the file's @version dropped).
	funcPrefix, filePrefix string
	// rewrites reports whether the package or file path p is moved.
	rewrites func(p string) bool
}

// vendored is a kube-apiserver built the GOPATH way from the Kubernetes
// tree: every dependency under k8s.io/kubernetes/vendor/.
var vendored = buildPaths{
	funcPrefix: "k8s.io/kubernetes/vendor/",
	filePrefix: "/go/src/k8s.io/kubernetes/vendor/",
	rewrites: func(p string) bool {
		// Standard library paths ("runtime.gopark", "net/http") have no
		// dot in their first element.
		first, _, slash := strings.Cut(p, "/")
		return slash && strings.Contains(first, ".") && !strings.HasPrefix(p, "k8s.io/kubernetes/") && !strings.HasPrefix(p, "k8s.io/kubernetes@")
	},
}

// forked is a fork building the staging modules from its own copy of the
// Kubernetes tree, as k3s's file paths show; the function names are moved
// too, as a GOPATH build of such a tree names them.
var forked = buildPaths{
	funcPrefix: "github.com/k3s-io/k3s/forks/kubernetes/staging/src/",
	filePrefix: "github.com/k3s-io/k3s/forks/kubernetes/staging/src/",
	rewrites: func(p string) bool {
		for _, m := range []string{"k8s.io/apiserver", "k8s.io/apimachinery", "k8s.io/client-go", "k8s.io/component-base", "k8s.io/api", "k8s.io/kube-aggregator", "k8s.io/apiextensions-apiserver"} {
			if strings.HasPrefix(p, m+"/") || strings.HasPrefix(p, m+"@") || strings.HasPrefix(p, m+".") {
				return true
			}
		}
		return false
	},
}

func (b buildPaths) fn(name string) string {
	if b.rewrites(name) {
		return b.funcPrefix + name
	}
	return name
}

func (b buildPaths) file(path string) string {
	if !b.rewrites(path) {
		return path
	}
	mod, rest, ok := strings.Cut(path, "@")
	if !ok {
		return b.filePrefix + path
	}
	_, rest, _ = strings.Cut(rest, "/")
	return b.filePrefix + mod + "/" + rest
}

// debug2 rewrites a debug=2 dump line by line: function lines, "created
// by" lines and the tab-indented file lines.
func (b buildPaths) debug2(dump []byte) []byte {
	lines := strings.Split(string(dump), "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "\t"):
			lines[i] = "\t" + b.file(l[1:])
		case strings.HasPrefix(l, "created by "):
			lines[i] = "created by " + b.fn(strings.TrimPrefix(l, "created by "))
		case l != "" && !strings.HasPrefix(l, "goroutine ") && !strings.HasPrefix(l, "..."):
			lines[i] = b.fn(l)
		}
	}
	return []byte(strings.Join(lines, "\n"))
}

// debug1 rewrites the "#\t0xpc\tfunc+0xoff\tfile:line" lines of a debug=1
// dump.
func (b buildPaths) debug1(dump []byte) []byte {
	lines := strings.Split(string(dump), "\n")
	for i, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) == 4 && f[0] == "#" {
			f[2], f[3] = b.fn(f[2]), b.file(f[3])
			lines[i] = strings.Join(f, "\t")
		}
	}
	return []byte(strings.Join(lines, "\n"))
}

// protobuf rewrites the functions of a gzipped protobuf profile.
func (b buildPaths) protobuf(t *testing.T, gz []byte) []byte {
	t.Helper()
	p, err := profile.Parse(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Function {
		f.Name, f.SystemName, f.Filename = b.fn(f.Name), b.fn(f.SystemName), b.file(f.Filename)
	}
	var out bytes.Buffer
	if err := p.Write(&out); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// rewriteCapture copies the capture directory src into dst, rewriting its
// goroutine dumps with b.
func rewriteCapture(t *testing.T, b buildPaths, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		switch e.Name() {
		case "goroutine-debug2.txt":
			data = b.debug2(data)
		case "goroutine-debug1.txt":
			data = b.debug1(data)
		case "goroutine.pb.gz":
			data = b.protobuf(t, data)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// buildCase is what TestAnalyzeOtherBuildsFindTheSame analyzes of a capture
// tree, and buildResult what analyze answered.
type buildCase struct {
	name string
	args func(root string) []string
}

type buildResult struct {
	code     int
	out, err string
}

// TestAnalyzeOtherBuildsFindTheSame: a dump of a vendored (GOPATH) or
// forked build of the real v1.37.2 capture, made by rewriting its frame
// paths, is diagnosed as the original: the same JSON report, and no "holds
// no kube-apiserver code" warning. Each of the three dump formats alone,
// and both samples.
func TestAnalyzeOtherBuildsFindTheSame(t *testing.T) {
	t.Parallel()
	cases := []buildCase{
		{"t1-t2", func(root string) []string { return []string{filepath.Join(root, "t1"), filepath.Join(root, "t2")} }},
		{"debug2", func(root string) []string { return []string{filepath.Join(root, "t2", "goroutine-debug2.txt")} }},
		{"debug1", func(root string) []string {
			return []string{filepath.Join(root, "t2", "goroutine-debug1.txt"), filepath.Join(root, "t2", "apf-requests.txt"), filepath.Join(root, "t2", "captured-at.txt")}
		}},
		{"protobuf", func(root string) []string { return []string{filepath.Join(root, "t2", "goroutine.pb.gz")} }},
	}
	// The original's reports, once.
	orig := filepath.Dir(golden.Fixture("t1"))
	want := make([]buildResult, len(cases))
	for i, tc := range cases {
		want[i].code, want[i].out, want[i].err = run(t, nil, append([]string{"analyze", "-o", "json"}, tc.args(orig)...)...)
	}
	for _, b := range []struct {
		name  string
		paths buildPaths
	}{{"vendored", vendored}, {"forked", forked}} {
		// Each build is rewritten and analyzed in a subtest of its own,
		// beside the other build's.
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			analyzeBuild(t, b.paths, cases, want, orig)
		})
	}
}

// analyzeBuild rewrites the seed-repro capture for a build with paths, and
// checks each case's report against the original's.
func analyzeBuild(t *testing.T, paths buildPaths, cases []buildCase, want []buildResult, orig string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "seed-repro")
	for _, s := range []string{"t1", "t2"} {
		rewriteCapture(t, paths, golden.Fixture(s), filepath.Join(dir, s))
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, got, gotErr := run(t, nil, append([]string{"analyze", "-o", "json"}, tc.args(dir)...)...)
			// The captures are named by their directories.
			got, gotErr = strings.ReplaceAll(got, dir, orig), strings.ReplaceAll(gotErr, dir, orig)
			if code != want[i].code {
				t.Errorf("exit code = %d, want %d (the original's); stderr: %s", code, want[i].code, gotErr)
			}
			if strings.Contains(got, "no kube-apiserver code") {
				t.Errorf("the rewritten dump is taken for another process's")
			}
			if d := cmp.Diff(want[i].out, got); d != "" {
				t.Errorf("JSON report differs from the original's (-want +got):\n%s", d)
			}
			if d := cmp.Diff(want[i].err, gotErr); d != "" {
				t.Errorf("stderr differs from the original's (-want +got):\n%s", d)
			}
		})
	}
}

// TestRewrittenDumpsAreRewritten guards the test above against a rewrite
// that changes nothing.
func TestRewrittenDumpsAreRewritten(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join(golden.Fixture("t2"), "goroutine-debug2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		paths      buildPaths
		fn, inFile string
	}{
		{vendored, "\nk8s.io/kubernetes/vendor/k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInterval(", "\t/go/src/k8s.io/kubernetes/vendor/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go:"},
		{forked, "\ngithub.com/k3s-io/k3s/forks/kubernetes/staging/src/k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInterval(", "\tgithub.com/k3s-io/k3s/forks/kubernetes/staging/src/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go:"},
	} {
		got := string(tc.paths.debug2(src))
		if !strings.Contains(got, tc.fn) || !strings.Contains(got, tc.inFile) {
			t.Errorf("rewritten dump lacks %q or %q", tc.fn, tc.inFile)
		}
		if strings.Contains(got, "\nk8s.io/apiserver/") {
			t.Errorf("rewritten dump (%s) still has a k8s.io/apiserver/ function line", tc.paths.funcPrefix)
		}
	}
}
