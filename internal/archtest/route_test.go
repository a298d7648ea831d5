package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A guarded parser: the functions of pkg that turn dump or trace bytes
// into goroutines, which only the directories in owners may use. Every
// other package reaches watchers through internal/watches (ReadDump,
// ReadProfile, ReadTrace), the one route from evidence to watchers.
type guarded struct {
	pkg    string // import path
	funcs  []string
	owners []string // directories, relative to the module root
}

var guardedParsers = []guarded{
	{module + "/pkg/stacks", []string{"NewScanner", "ParseDebug1", "ParseDebug2", "ParseProfile"}, []string{"pkg/stacks", "internal/watches"}},
	{module + "/pkg/trace", []string{"Read"}, []string{"pkg/trace", "internal/watches"}},
	// An audit log is an input like every other: the engine reads it,
	// at the end of the run, and nothing else parses it (issue 34).
	{module + "/pkg/audit", []string{"Detect", "Read", "Scan", "ScanFilter"}, []string{"pkg/audit", "internal/engine"}},
}

// guardedImports may be imported only by the directories listed: the
// execution-trace reader pkg/trace wraps.
var guardedImports = map[string][]string{
	"golang.org/x/exp/trace": {"pkg/trace", "internal/watches"},
}

// use says which route to take instead of a guarded parser.
func (g guarded) use() string {
	if g.pkg == module+"/pkg/audit" {
		return "give the log to engine.Run as a Config.AuditLogs source"
	}
	return "dump or trace bytes become goroutines through watches.ReadDump, ReadProfile or ReadTrace"
}

func ownedBy(dir string, owners []string) bool {
	for _, o := range owners {
		if dir == o || strings.HasPrefix(dir, o+"/") {
			return true
		}
	}
	return false
}

// routeViolations lists the places of f (in directory dir of the module)
// that import a guarded package or name a guarded parser outside its
// owners, as "file:line: what".
func routeViolations(fset *token.FileSet, f *ast.File, dir string) []string {
	var out []string
	names := map[string]guarded{} // local name -> guarded package
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		if owners, ok := guardedImports[p]; ok && !ownedBy(dir, owners) {
			out = append(out, fmt.Sprintf("%s: imports %s: only %s may", fset.Position(imp.Pos()), p, strings.Join(owners, ", ")))
		}
		for _, g := range guardedParsers {
			if p != g.pkg || ownedBy(dir, g.owners) {
				continue
			}
			name := path.Base(p)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			names[name] = g
		}
	}
	if len(names) == 0 {
		return out
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		if g, ok := names[id.Name]; ok {
			for _, fn := range g.funcs {
				if sel.Sel.Name == fn {
					out = append(out, fmt.Sprintf("%s: uses %s.%s: only %s parse this input (%s)", fset.Position(sel.Pos()), id.Name, fn, strings.Join(g.owners, ", "), g.use()))
				}
			}
		}
		return true
	})
	return out
}

// TestOneRouteFromDumpsToWatchers fails when a non-test file of the module
// outside pkg/stacks, pkg/trace and internal/watches parses a goroutine
// dump or an execution trace itself.
func TestOneRouteFromDumpsToWatchers(t *testing.T) {
	var got []string
	eachSourceFile(t, func(fset *token.FileSet, f *ast.File, rel string) {
		got = append(got, routeViolations(fset, f, path.Dir(rel))...)
	})
	for _, v := range got {
		t.Error(v)
	}
}

// TestGuardedParsersAreAllListed fails when pkg/stacks or pkg/trace gains
// an exported function reading an io.Reader that guardedParsers does not
// list, or loses one it lists: a new way from bytes to goroutines must be
// guarded too.
func TestGuardedParsersAreAllListed(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, g := range guardedParsers {
		dir := strings.TrimPrefix(g.pkg, module+"/")
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, filepath.Join(root, dir), func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		var readers []string
		for _, p := range pkgs {
			for _, f := range p.Files {
				readers = append(readers, readerFuncs(f)...)
			}
		}
		sort.Strings(readers)
		want := append([]string(nil), g.funcs...)
		sort.Strings(want)
		if diff := cmp.Diff(want, readers); diff != "" {
			t.Errorf("%s: exported functions taking an io.Reader (-guarded +found):\n%s", dir, diff)
		}
	}
}

// readerFuncs are the exported functions (not methods) of f with an
// io.Reader parameter.
func readerFuncs(f *ast.File) []string {
	ioName := ""
	for _, imp := range f.Imports {
		if imp.Path.Value == `"io"` {
			ioName = "io"
			if imp.Name != nil {
				ioName = imp.Name.Name
			}
		}
	}
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || !fn.Name.IsExported() || ioName == "" {
			continue
		}
		for _, p := range fn.Type.Params.List {
			if sel, ok := p.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Reader" {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == ioName {
					out = append(out, fn.Name.Name)
					break
				}
			}
		}
	}
	return out
}

// The checker itself: each way a file can reach a guarded parser is
// reported, and the owners and the packages' other functions are not.
func TestRouteViolations(t *testing.T) {
	tests := []struct {
		name, dir, src string
		want           []string
	}{
		{"scanner outside", "internal/live", `package live
import "github.com/watch-doctor/watch-doctor/pkg/stacks"
func f() { _ = stacks.NewScanner(nil); _ = stacks.TopFunc(nil) }`,
			[]string{"x.go:3:16: uses stacks.NewScanner"}},
		{"renamed import, a function value", "internal/bundle", `package bundle
import st "github.com/watch-doctor/watch-doctor/pkg/stacks"
var parse = st.ParseProfile`,
			[]string{"x.go:3:13: uses st.ParseProfile"}},
		{"trace reader and x/exp/trace", "internal/live", `package live
import (
	"golang.org/x/exp/trace"
	wtrace "github.com/watch-doctor/watch-doctor/pkg/trace"
)
func f() { wtrace.Read(nil, wtrace.Options{}); _ = trace.NewReader }`,
			[]string{"x.go:3:2: imports golang.org/x/exp/trace", "x.go:6:12: uses wtrace.Read"}},
		{"the classifier owns them", "internal/watches", `package watches
import "github.com/watch-doctor/watch-doctor/pkg/stacks"
func f() { _ = stacks.ParseDebug1(nil) }`, nil},
		{"the parser's own subdirectory", "pkg/trace/internal", `package internal
import "golang.org/x/exp/trace"
var _ = trace.NewReader`, nil},
		{"a directory that only starts like an owner", "internal/watchesx", `package watchesx
import "github.com/watch-doctor/watch-doctor/pkg/stacks"
var _ = stacks.ParseDebug2`, []string{"x.go:3:9: uses stacks.ParseDebug2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x.go", tt.src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range routeViolations(fset, f, tt.dir) {
				// The place and what is used; the advice after it is the
				// same for every line.
				place, _, _ := strings.Cut(v, ": only ")
				got = append(got, place)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}
