package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// engineCalls are the files that may call engine.Run, each once: one call
// per command (serve's look and traced look share look.go's). A command
// that builds its report another way drifts from the others.
var engineCalls = map[string]int{
	"internal/cli/analyze.go":         1,
	"internal/cli/collect.go":         1,
	"internal/cli/diagnose.go":        1,
	"internal/cli/fleet.go":           1,
	"internal/cli/replay_scenario.go": 1,
	"internal/exporter/look.go":       1,
}

// diagnoseCalls are the files that may call diagnosis.Diagnose: the
// engine's alone.
var diagnoseCalls = map[string]int{
	"internal/engine/servers.go": 1,
}

// eachSourceFile parses every non-test Go file of the module and calls f
// with its path relative to the module root.
func eachSourceFile(t *testing.T, f func(fset *token.FileSet, file *ast.File, rel string)) {
	t.Helper()
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "node_modules", "vendor":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		f(fset, file, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d source files under %s: the walk missed the module", files, root)
	}
}

// callsOf counts the calls in file of function fn of the package at
// importPath, under whatever name the file imports it.
func callsOf(file *ast.File, importPath, fn string) int {
	name := ""
	for _, imp := range file.Imports {
		if p, err := strconv.Unquote(imp.Path.Value); err == nil && p == importPath {
			name = path.Base(p)
			if imp.Name != nil {
				name = imp.Name.Name
			}
		}
	}
	if name == "" {
		return 0
	}
	n := 0
	ast.Inspect(file, func(node ast.Node) bool {
		call, ok := node.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == fn {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == name {
				n++
			}
		}
		return true
	})
	return n
}

// TestOneEngineCallPerCommand fails when a command builds its report
// without the engine, calls it twice, or when anything but the engine
// calls the diagnosis rules.
func TestOneEngineCallPerCommand(t *testing.T) {
	gotEngine, gotDiagnose := map[string]int{}, map[string]int{}
	eachSourceFile(t, func(_ *token.FileSet, file *ast.File, rel string) {
		if n := callsOf(file, module+"/internal/engine", "Run"); n > 0 {
			gotEngine[rel] = n
		}
		if n := callsOf(file, module+"/internal/diagnosis", "Diagnose") + callsOf(file, module+"/internal/diagnosis", "DiagnoseContext"); n > 0 {
			gotDiagnose[rel] = n
		}
	})
	if diff := cmp.Diff(engineCalls, gotEngine); diff != "" {
		t.Errorf("calls of engine.Run per file (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(diagnoseCalls, gotDiagnose); diff != "" {
		t.Errorf("calls of diagnosis.Diagnose or DiagnoseContext per file (-want +got):\n%s", diff)
	}
}

// displayNameViolations lists the places of file that read an identity
// back from a display name: a prefix match on " (" (as in
// "<instance> (process started ...)"), or the display string made
// anywhere but bundle.DisplayName.
func displayNameViolations(fset *token.FileSet, file *ast.File, rel string) []string {
	var out []string
	ast.Inspect(file, func(node ast.Node) bool {
		switch n := node.(type) {
		case *ast.CallExpr:
			sel, ok := n.Fun.(*ast.SelectorExpr)
			if !ok || !strings.Contains(sel.Sel.Name, "Prefix") {
				return true
			}
			ast.Inspect(n, func(a ast.Node) bool {
				if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil && strings.HasPrefix(s, " (") {
						out = append(out, fmt.Sprintf("%s: %s matches a display name back by prefix: compare the identity's fields", fset.Position(n.Pos()), sel.Sel.Name))
					}
				}
				return true
			})
		case *ast.BasicLit:
			if s, err := strconv.Unquote(n.Value); err == nil && strings.Contains(s, "(process started") && rel != "internal/bundle/group.go" {
				out = append(out, fmt.Sprintf("%s: makes or reads the display name of a restarted instance: only bundle.DisplayName does", fset.Position(n.Pos())))
			}
		}
		return true
	})
	return out
}

// TestNoIdentityFromDisplayNames fails when a non-test file matches an
// instance's display name back to find which instance it is.
func TestNoIdentityFromDisplayNames(t *testing.T) {
	var got []string
	eachSourceFile(t, func(fset *token.FileSet, file *ast.File, rel string) {
		got = append(got, displayNameViolations(fset, file, rel)...)
	})
	for _, v := range got {
		t.Error(v)
	}
}

// TestDisplayNameViolations: the checks see what they look for.
func TestDisplayNameViolations(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      int
	}{
		{"prefix on a display name", `package x; import "strings"; func f(a, b string) bool { return strings.HasPrefix(a, b+" (") }`, 1},
		{"cut prefix", `package x; import "strings"; func f(a string) { strings.CutPrefix(a, " (process") }`, 1},
		{"the display string made elsewhere", `package x; var s = "%s (process started %s)"`, 1},
		{"an ordinary prefix", `package x; import "strings"; func f(a string) bool { return strings.HasPrefix(a, "go1.") }`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x.go", tc.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := displayNameViolations(fset, f, "internal/x/x.go"); len(got) != tc.want {
				t.Errorf("got %d violations %q, want %d", len(got), got, tc.want)
			}
		})
	}
}

// TestCallsOf: calls are counted under the name the file imports.
func TestCallsOf(t *testing.T) {
	src := `package x; import e "github.com/watch-doctor/watch-doctor/internal/engine"; func f() { e.Run(nil, e.Config{}); e.Run(nil, e.Config{}) }`
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := callsOf(f, module+"/internal/engine", "Run"); got != 2 {
		t.Errorf("callsOf = %d, want 2", got)
	}
	if got := callsOf(f, module+"/internal/diagnosis", "Diagnose"); got != 0 {
		t.Errorf("callsOf diagnosis = %d, want 0", got)
	}
}
