package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mutableAllowlist are exported package-level variables allowed, for a
// stated reason, until the reason goes. An entry that is gone fails
// TestNoExportedMutableVariables, so the list never outlives its reason.
var mutableAllowlist = map[string]string{}

// exportedVars lists, as "dir.Name", the exported package-level variables
// of the non-test Go files under root's dirs, error sentinels aside (a
// name starting with Err given errors.New or fmt.Errorf, which callers
// compare with errors.Is and never assign).
func exportedVars(root string, files []string, dirs []string) ([]string, error) {
	var out []string
	for _, f := range files {
		if !hasPrefix(f, dirs) {
			continue
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, filepath.Join(root, filepath.FromSlash(f)), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if !n.IsExported() || i < len(vs.Values) && isSentinel(n.Name, vs.Values[i]) {
						continue
					}
					out = append(out, path.Dir(f)+"."+n.Name)
				}
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// isSentinel reports an error sentinel: Err... = errors.New(...) or
// fmt.Errorf(...).
func isSentinel(name string, v ast.Expr) bool {
	call, ok := v.(*ast.CallExpr)
	if !ok || !strings.HasPrefix(name, "Err") {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && (pkg.Name == "errors" && sel.Sel.Name == "New" || pkg.Name == "fmt" && sel.Sel.Name == "Errorf")
}

// TestNoExportedMutableVariables fails naming every exported
// package-level variable of the tool's code (cmd/, internal/, pkg/) that
// is not an error sentinel: another package could change what every
// caller reads. A table is returned by a function (api.FindingTypes,
// audit.DefaultLimits), a value is a constant.
func TestNoExportedMutableVariables(t *testing.T) {
	files, err := sourceFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := exportedVars(root, files, []string{"cmd/", "internal/", "pkg/"})
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, v := range got {
		found[v] = true
		if _, ok := mutableAllowlist[v]; !ok {
			t.Errorf("%s is an exported variable: make it a constant, or a function returning a copy", v)
		}
	}
	for v := range mutableAllowlist {
		if !found[v] {
			t.Errorf("%s is in mutableAllowlist but is no exported variable now: remove it from the list", v)
		}
	}
}

// TestExportedVars runs the walk on a tree of its own: an exported
// variable is named, a sentinel, an unexported one, a constant and a
// test file's are not.
func TestExportedVars(t *testing.T) {
	dir := t.TempDir()
	src := "package a\n\nimport (\n\t\"errors\"\n\t\"fmt\"\n)\n\nvar Table = []int{1}\n\nvar (\n\tErrX = errors.New(\"x\")\n\tErrY = fmt.Errorf(\"y\")\n\tErrZ = []int{2}\n\tlocal = 3\n)\n\nconst Max = 4\n"
	if err := os.MkdirAll(filepath.Join(dir, "pkg", "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pkg", "a", "a.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := sourceFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := exportedVars(dir, files, []string{"pkg/"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"pkg/a.ErrZ", "pkg/a.Table"}, got); diff != "" {
		t.Errorf("exportedVars (-want +got):\n%s", diff)
	}
}
