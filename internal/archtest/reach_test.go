package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// longFunc is the length, in lines, from which a function must be reached
// from a test of its own package.
const longFunc = 50

// The rule (issue 27, "tests that guard behaviour"): every function or
// method of more than longFunc lines under cmd/, internal/ and pkg/ is
// reached from a _test.go file of its own directory, through the
// package's own calls. Reached is decided on the syntax, cheaply enough
// for every `make test`: from the names the test files use, a function is
// reached when a reached function's body uses its name (a call, a method
// value, a method of that name on any type: interface calls count). It
// over-approximates coverage (a name used on a branch no test takes counts)
// and never under-approximates it within the package: a long function no
// test of its package can reach, only another package's, fails here.

// funcInfo is one function declaration of a package.
type funcInfo struct {
	key   string // Name, or Recv.Name for a method
	name  string
	lines int
	uses  map[string]bool // the names its body uses
	pos   string
}

// unreachedLongFuncs lists, for the package in dir, the functions over
// longFunc lines that its test files do not reach, as "file:line Name".
func unreachedLongFuncs(dir string) ([]string, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var funcs []funcInfo
	roots := map[string]bool{}
	hasTests := false
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(e.Name(), "_test.go") {
			hasTests = true
			for n := range usedNames(f) {
				roots[n] = true
			}
			continue
		}
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.VAR {
				// A package-level variable is reached by its name like a
				// function, and reaches what its value names (a table of
				// functions).
				for _, s := range gd.Specs {
					vs := s.(*ast.ValueSpec)
					for _, n := range vs.Names {
						fi := funcInfo{name: n.Name, key: n.Name, uses: map[string]bool{}}
						for _, v := range vs.Values {
							for u := range usedNames(v) {
								fi.uses[u] = true
							}
						}
						funcs = append(funcs, fi)
					}
				}
				continue
			}
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			fi := funcInfo{name: fd.Name.Name, key: fd.Name.Name, uses: usedNames(fd.Body)}
			if fd.Recv != nil && len(fd.Recv.List) > 0 {
				fi.key = recvName(fd.Recv.List[0].Type) + "." + fd.Name.Name
			}
			start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
			fi.lines = end.Line - start.Line + 1
			fi.pos = fmt.Sprintf("%s:%d", filepath.ToSlash(start.Filename), start.Line)
			funcs = append(funcs, fi)
		}
	}
	if !hasTests {
		return nil, nil // TestEverySourceFileHasATestBesideIt speaks for it
	}
	// init functions and methods the runtime calls (String, Error, ServeHTTP
	// through an interface) are reached by name like any other.
	reached := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for i := range funcs {
			f := &funcs[i]
			if reached[f.key] || !(roots[f.name] || f.name == "init") {
				continue
			}
			reached[f.key] = true
			changed = true
			for n := range f.uses {
				roots[n] = true
			}
		}
	}
	var out []string
	for _, f := range funcs {
		if f.lines > longFunc && !reached[f.key] {
			out = append(out, fmt.Sprintf("%s %s (%d lines)", f.pos, f.key, f.lines))
		}
	}
	sort.Strings(out)
	return out, nil
}

// usedNames are the identifiers n uses (names and selected names).
func usedNames(n ast.Node) map[string]bool {
	out := map[string]bool{}
	ast.Inspect(n, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.Ident:
			out[x.Name] = true
		case *ast.SelectorExpr:
			out[x.Sel.Name] = true
		}
		return true
	})
	return out
}

// recvName is the type name of a method receiver.
func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}

// TestLongFunctionsAreReachedByTheirTests applies the rule to every
// package under cmd/, internal/ and pkg/.
func TestLongFunctionsAreReachedByTheirTests(t *testing.T) {
	pkgs := 0
	for _, top := range []string{"cmd", "internal", "pkg"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") {
				return filepath.SkipDir
			}
			missing, err := unreachedLongFuncs(path)
			if err != nil {
				return err
			}
			pkgs++
			for _, m := range missing {
				rel, _ := filepath.Rel(root, m)
				t.Errorf("%s: over %d lines and reached by no test of its package: test it there", filepath.ToSlash(rel), longFunc)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if pkgs < 20 {
		t.Errorf("walked %d packages, want the tree's", pkgs)
	}
}

// TestUnreachedLongFuncs runs the rule on a package of its own, so a rule
// that accepts everything fails.
func TestUnreachedLongFuncs(t *testing.T) {
	dir := t.TempDir()
	long := func(name, body string) string {
		return "func " + name + " {\n" + body + strings.Repeat("\t_ = 0\n", longFunc) + "}\n"
	}
	src := "package p\n\n" +
		long("Tested()", "\thelper()\n") +
		long("helper()", "") +
		long("(t *T) Method()", "") +
		long("Untested()", "") +
		long("(t T) Orphan()", "") +
		long("viaTable()", "") + long("inTable()", "") +
		"func short() {}\n\ntype T struct{}\n\nvar table = []func(){inTable}\n\nvar unused = []func(){viaTable}\n"
	test := "package p\n\nimport \"testing\"\n\nfunc TestP(t *testing.T) { Tested(); new(T).Method(); _ = table }\n"
	for name, text := range map[string]string{"p.go": src, "p_test.go": test} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := unreachedLongFuncs(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i] = got[i][strings.Index(got[i], " ")+1:]
	}
	want := []string{fmt.Sprintf("Untested (%d lines)", longFunc+2), fmt.Sprintf("T.Orphan (%d lines)", longFunc+2), fmt.Sprintf("viaTable (%d lines)", longFunc+2)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unreached long functions (-want +got):\n%s", diff)
	}
}
