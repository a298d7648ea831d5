package metrics

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The facts files under testdata/upstream list every metric that
// k8s.io/apiserver defines in the three packages watch-doctor reads, one file
// per release, as read from that release's source in the Go module cache:
//
//	go mod download k8s.io/apiserver@v0.30.14   # ... v0.37.2, see catalog.go
//	go test ./pkg/metrics -run TestUpstream -upstream
//
// TestUpstreamSource re-reads the source whenever the module is in the cache
// and fails if a facts file drifted; TestCatalogPerRelease (catalog_test.go)
// checks the catalog against the facts, one subtest per release.
var upstream = flag.Bool("upstream", false, "rewrite testdata/upstream/*.txt from k8s.io/apiserver source in the module cache")

// upstreamDirs are the packages whose metric definitions the catalog uses.
var upstreamDirs = []string{
	"pkg/endpoints/metrics",
	"pkg/storage/cacher/metrics",
	"pkg/util/flowcontrol/metrics",
}

// fact is one metric definition found in the source.
type fact struct {
	Name       string // fully qualified: namespace_subsystem_name
	Type       string // counter, gauge, histogram, summary
	Labels     []string
	Stability  string // ALPHA, BETA, STABLE, INTERNAL, or "" when unset (ALPHA)
	Deprecated string // DeprecatedVersion, "" when not deprecated
	Pos        string // file:line of the Name field, relative to the module root
}

func (f fact) String() string {
	labels := strings.Join(f.Labels, ",")
	if labels == "" {
		labels = "-"
	}
	dep := f.Deprecated
	if dep == "" {
		dep = "-"
	}
	stab := f.Stability
	if stab == "" {
		stab = "-"
	}
	return strings.Join([]string{f.Name, f.Type, labels, stab, dep, f.Pos}, "\t")
}

func parseFact(line string) (fact, error) {
	cols := strings.Split(line, "\t")
	if len(cols) != 6 {
		return fact{}, fmt.Errorf("want 6 tab-separated columns, got %d", len(cols))
	}
	dash := func(s string) string {
		if s == "-" {
			return ""
		}
		return s
	}
	f := fact{Name: cols[0], Type: cols[1], Stability: dash(cols[3]), Deprecated: dash(cols[4]), Pos: cols[5]}
	if l := dash(cols[2]); l != "" {
		f.Labels = strings.Split(l, ",")
	}
	return f, nil
}

// readFacts loads testdata/upstream/<file>.
func readFacts(t testing.TB, path string) map[string]fact {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading facts: %v", err)
	}
	out := map[string]fact{}
	for i, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f, err := parseFact(line)
		if err != nil {
			t.Fatalf("%s line %d: %v", path, i+1, err)
		}
		out[f.Name] = f
	}
	return out
}

func factsFile(r Release) string {
	return filepath.Join("testdata", "upstream", fmt.Sprintf("v%d.%d.txt", r.Major, r.Minor))
}

func moduleCache(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("GOMODCACHE"); d != "" {
		return d
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("go env GOMODCACHE: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestUpstreamSource re-reads every release's source (when it is in the
// module cache) and compares it with the facts file, or rewrites the facts
// file with -upstream.
func TestUpstreamSource(t *testing.T) {
	cache := moduleCache(t)
	for _, rel := range Releases() {
		t.Run(rel.String(), func(t *testing.T) {
			mod := "k8s.io/apiserver@" + rel.ReadFrom
			root := filepath.Join(cache, filepath.FromSlash(mod))
			if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
				if *upstream {
					t.Fatalf("%s is not in the module cache: run go mod download -json %s", mod, mod)
				}
				t.Skipf("%s is not in the module cache (go mod download -json %s to check the facts file)", mod, mod)
			}
			facts, err := readUpstream(root)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			fmt.Fprintf(&buf, "# metric definitions in %s (%s), read by TestUpstreamSource\n", mod, strings.Join(upstreamDirs, ", "))
			fmt.Fprintf(&buf, "# name\ttype\tlabels\tstability\tdeprecated-since\tsource\n")
			for _, f := range facts {
				fmt.Fprintln(&buf, f.String())
			}
			path := factsFile(rel.Release)
			if *upstream {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("reading %s (rewrite with -upstream): %v", path, err)
			}
			if diff := cmp.Diff(string(want), buf.String()); diff != "" {
				t.Errorf("%s drifted from %s (-file +source); rewrite with -upstream:\n%s", path, mod, diff)
			}
		})
	}
}

// readUpstream extracts the metric definitions from the upstream packages
// under root (a k8s.io/apiserver module directory).
func readUpstream(root string) ([]fact, error) {
	var out []fact
	for _, dir := range upstreamDirs {
		fset := token.NewFileSet()
		paths, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(dir), "*.go"))
		if err != nil {
			return nil, err
		}
		var files []*ast.File
		var names []string
		for _, p := range paths {
			if strings.HasSuffix(p, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				return nil, fmt.Errorf("parsing %s: %w", p, err)
			}
			rel, _ := filepath.Rel(root, p)
			files, names = append(files, f), append(names, filepath.ToSlash(rel))
		}
		consts := stringConsts(files)
		for i, f := range files {
			out = append(out, factsInFile(fset, f, names[i], consts)...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// stringConsts collects package-level string constants and variables
// initialised with a string literal (namespace, subsystem, label names).
func stringConsts(files []*ast.File) map[string]string {
	m := map[string]string{}
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || (gd.Tok != token.CONST && gd.Tok != token.VAR) {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						if v, ok := stringLit(vs.Values[i], nil); ok {
							m[n.Name] = v
						}
					}
				}
			}
		}
	}
	return m
}

func stringLit(e ast.Expr, consts map[string]string) (string, bool) {
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(x.Value)
		return s, err == nil
	case *ast.Ident:
		v, ok := consts[x.Name]
		return v, ok
	case *ast.SelectorExpr: // e.g. epmetrics.ReadOnlyKind: not resolvable here
		return "", false
	}
	return "", false
}

func optsKind(typ ast.Expr) string {
	name := ""
	switch x := typ.(type) {
	case *ast.SelectorExpr:
		name = x.Sel.Name
	case *ast.Ident:
		name = x.Name
	}
	switch name {
	case "CounterOpts":
		return "counter"
	case "GaugeOpts":
		return "gauge"
	case "HistogramOpts", "TimingHistogramOpts":
		return "histogram"
	case "SummaryOpts":
		return "summary"
	}
	return ""
}

// factsInFile finds composite literals of component-base's *Opts types and
// the label list passed next to them.
func factsInFile(fset *token.FileSet, file *ast.File, rel string, consts map[string]string) []fact {
	var out []fact
	var stack []ast.Node
	ast.Inspect(file, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		cl, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		kind := optsKind(cl.Type)
		if kind == "" {
			return true
		}
		var ns, sub, name, stab, dep string
		var namePos token.Pos
		for _, el := range cl.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			key, _ := kv.Key.(*ast.Ident)
			if key == nil {
				continue
			}
			switch key.Name {
			case "Namespace":
				ns, _ = stringLit(kv.Value, consts)
			case "Subsystem":
				sub, _ = stringLit(kv.Value, consts)
			case "Name":
				name, _ = stringLit(kv.Value, consts)
				namePos = kv.Pos()
			case "StabilityLevel":
				if sel, ok := kv.Value.(*ast.SelectorExpr); ok {
					stab = sel.Sel.Name
				}
			case "DeprecatedVersion":
				dep, _ = stringLit(kv.Value, consts)
			}
		}
		if name == "" {
			return true
		}
		var parts []string
		for _, p := range []string{ns, sub, name} {
			if p != "" {
				parts = append(parts, p)
			}
		}
		f := fact{
			Name:       strings.Join(parts, "_"),
			Type:       kind,
			Stability:  stab,
			Deprecated: dep,
			Pos:        fmt.Sprintf("%s:%d", rel, fset.Position(namePos).Line),
		}
		// The opts literal is usually &Opts{...}, the first argument of a
		// NewXVec(opts, labels) call: take the labels from that call.
		for i := len(stack) - 2; i >= 0 && i >= len(stack)-4; i-- {
			call, ok := stack[i].(*ast.CallExpr)
			if !ok {
				continue
			}
			if len(call.Args) >= 2 {
				if lc, ok := call.Args[1].(*ast.CompositeLit); ok {
					for _, e := range lc.Elts {
						if s, ok := stringLit(e, consts); ok {
							f.Labels = append(f.Labels, s)
						} else {
							f.Labels = append(f.Labels, "?")
						}
					}
				}
			}
			break
		}
		out = append(out, f)
		return true
	})
	return out
}
