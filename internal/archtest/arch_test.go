package archtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/watch-doctor/watch-doctor"

// cliOnly are the modules only internal/cli may import, directly or not.
var cliOnly = []string{"github.com/spf13/cobra", "github.com/spf13/pflag", "k8s.io/cli-runtime"}

// viaUpstream are the only packages through which pflag may reach an engine:
// k8s.io/apiserver's cacher (run by internal/replay/upstream) needs them.
var viaUpstream = []string{"k8s.io/component-base/"}

// helpers are the packages under internal/ that serve tests and benchmarks
// only: no package of the tool's imports them outside its tests, and the
// drawing leaves them out.
var helpers = []string{
	module + "/internal/archtest",
	module + "/internal/benchmetrics",
	module + "/internal/dumpgen",
	module + "/internal/fakeapiserver",
	module + "/internal/golden",
	module + "/internal/schematest",
}

func isHelper(path string) bool {
	for _, h := range helpers {
		if path == h || strings.HasPrefix(path, h+"/") {
			return true
		}
	}
	return false
}

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// level is a layer of the drawing: N, or N.M for the sub-level M of layer
// N (the rooms of internal/live are the sub-levels of layer 4). A package
// imports only packages of lower levels: a lower layer, or a lower
// sub-level of its own; a layer N without sub-level is N.0.
type level struct{ layer, sub int }

func (l level) below(m level) bool {
	return l.layer < m.layer || l.layer == m.layer && l.sub < m.sub
}

func (l level) String() string {
	if l.sub == 0 {
		return strconv.Itoa(l.layer)
	}
	return strconv.Itoa(l.layer) + "." + strconv.Itoa(l.sub)
}

// parseLevel reads "N" or "N.M", both non-negative.
func parseLevel(s string) (level, bool) {
	n, m, sub := strings.Cut(s, ".")
	var l level
	var err error
	if l.layer, err = strconv.Atoi(n); err != nil || l.layer < 0 {
		return level{}, false
	}
	if sub {
		if l.sub, err = strconv.Atoi(m); err != nil || l.sub < 1 {
			return level{}, false
		}
	}
	return l, true
}

// readLayers reads the ```layers block of docs/architecture.md: one line
// "N path path ..." (or "N.M path ...", a sub-level) per layer.
func readLayers(r io.Reader) (map[string]level, error) {
	layers := map[string]level{}
	in := false
	s := bufio.NewScanner(r)
	for line := 1; s.Scan(); line++ {
		text := strings.TrimSpace(s.Text())
		switch {
		case text == "```layers":
			in = true
		case in && text == "```":
			if len(layers) == 0 {
				return nil, errors.New("the layers block is empty")
			}
			return layers, nil
		case in && text != "":
			f := strings.Fields(text)
			n, ok := parseLevel(f[0])
			if !ok || len(f) < 2 {
				return nil, errors.New("line " + strconv.Itoa(line) + ": want \"N pkg/a pkg/b ...\" or \"N.M pkg/a ...\", got " + strconv.Quote(text))
			}
			for _, p := range f[1:] {
				layers[module+"/"+p] = n
			}
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New("no ```layers block")
}

func goList(t *testing.T, root string) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", "./...")
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func hasPrefix(path string, prefixes []string) bool {
	for _, p := range prefixes {
		if path == p || strings.HasPrefix(path, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return false
}

// TestImportsFollowTheDrawing fails when a package imports against the
// layers of docs/architecture.md, when a package of the tool (under pkg/ or
// internal/, the test helpers aside) is missing from the drawing, or when an engine package reaches cobra, pflag or cli-runtime.
func TestImportsFollowTheDrawing(t *testing.T) {
	root := filepath.Join("..", "..")
	f, err := os.Open(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	layers, err := readLayers(f)
	if err != nil {
		t.Fatalf("docs/architecture.md: %v", err)
	}
	cli := module + "/internal/cli"
	for _, p := range goList(t, root) {
		if !strings.HasPrefix(p.ImportPath, module+"/pkg/") && !strings.HasPrefix(p.ImportPath, module+"/internal/") || isHelper(p.ImportPath) {
			continue
		}
		layer, drawn := layers[p.ImportPath]
		if !drawn {
			t.Errorf("%s is not in the layers block of docs/architecture.md: draw it", p.ImportPath)
			continue
		}
		for _, imp := range p.Imports {
			if isHelper(imp) {
				t.Errorf("%s imports %s: that package is for tests and benchmarks", p.ImportPath, imp)
			}
			if l, ours := layers[imp]; ours && !l.below(layer) {
				t.Errorf("%s (layer %s) imports %s (layer %s): against the drawn direction", p.ImportPath, layer, imp, l)
			}
			if p.ImportPath != cli && hasPrefix(imp, cliOnly) {
				t.Errorf("%s imports %s: only internal/cli may", p.ImportPath, imp)
			}
		}
		if p.ImportPath == cli {
			continue
		}
		for _, dep := range p.Deps {
			if !hasPrefix(dep, cliOnly) {
				continue
			}
			if dep == "github.com/spf13/pflag" && reachedOnlyVia(p, dep) {
				continue
			}
			t.Errorf("%s depends on %s: only internal/cli may", p.ImportPath, dep)
		}
	}
}

// reachedOnlyVia reports whether dep is in p's dependencies only because of
// a package in viaUpstream (p's own packages do not import it).
func reachedOnlyVia(p pkg, dep string) bool {
	for _, imp := range p.Imports {
		if imp == dep {
			return false
		}
	}
	for _, d := range p.Deps {
		if hasPrefix(d, viaUpstream) {
			return true
		}
	}
	return false
}

func TestReadLayers(t *testing.T) {
	for _, tt := range []struct {
		name, doc string
		want      map[string]level
		wantErr   string
	}{
		{"ok", "x\n```layers\n1 pkg/a pkg/b\n0 pkg/c\n```\n", map[string]level{module + "/pkg/a": {1, 0}, module + "/pkg/b": {1, 0}, module + "/pkg/c": {0, 0}}, ""},
		{"sub-levels", "```layers\n4.2 pkg/top\n4.1 pkg/model\n4 pkg/x\n```\n", map[string]level{module + "/pkg/top": {4, 2}, module + "/pkg/model": {4, 1}, module + "/pkg/x": {4, 0}}, ""},
		{"sub-level 0", "```layers\n4.0 pkg/a\n```\n", nil, "line 2"},
		{"negative", "```layers\n-1 pkg/a\n```\n", nil, "line 2"},
		{"no block", "text\n", nil, "no ```layers block"},
		{"empty", "```layers\n```\n", nil, "empty"},
		{"bad line", "```layers\nfour pkg/a\n```\n", nil, "line 2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readLayers(strings.NewReader(tt.doc))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s: layer %s, want %s", k, got[k], v)
				}
			}
		})
	}
}

func TestLevelOrder(t *testing.T) {
	for _, tt := range []struct {
		a, b level
		want bool
	}{
		{level{3, 0}, level{4, 0}, true},
		{level{3, 2}, level{4, 1}, true},
		{level{4, 0}, level{4, 1}, true},
		{level{4, 1}, level{4, 2}, true},
		{level{4, 2}, level{4, 2}, false},
		{level{4, 2}, level{4, 1}, false},
		{level{5, 0}, level{4, 3}, false},
	} {
		if got := tt.a.below(tt.b); got != tt.want {
			t.Errorf("%s below %s = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
