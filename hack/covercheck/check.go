package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// longFunc is the length in lines (func keyword to closing brace) over
// which a function must be run by a test of its own package.
const longFunc = 50

// ruleRoots are the trees whose long functions the rule covers.
var ruleRoots = []string{"cmd", "internal", "pkg"}

// unrunLongFuncs lists, as "file:line Name (N lines)", every function over
// longFunc lines under root's ruleRoots that the profile lists and whose
// statements its package's tests never ran. Files the profile does not
// list (a package left out of the run, a build tag) are skipped.
func unrunLongFuncs(root string, p profile) ([]string, error) {
	var out []string
	for _, top := range ruleRoots {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() {
				if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				return nil
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if p[rel] == nil {
				return nil
			}
			found, err := unrunInFile(path, rel, p)
			out = append(out, found...)
			return err
		})
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
	}
	sort.Strings(out)
	return out, nil
}

// unrunInFile applies the rule to one source file.
func unrunInFile(path, rel string, p profile) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		from, to := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
		if to-from+1 <= longFunc {
			continue
		}
		if run, total := p.covered(rel, from, to); total > 0 && run == 0 {
			out = append(out, fmt.Sprintf("%s:%d %s (%d lines)", rel, from, funcName(fd), to-from+1))
		}
	}
	return out, nil
}

// funcName is Name, or Recv.Name for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		}
		return "?." + fd.Name.Name
	}
}

// readFloors reads "package percent" lines; # starts a comment.
func readFloors(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("floors line %d: want \"package percent\", got %q", n, sc.Text())
		}
		v, err := strconv.ParseFloat(fields[1], 64)
		if err != nil || v < 0 || v > 100 {
			return nil, fmt.Errorf("floors line %d: %q is not a percentage", n, fields[1])
		}
		if _, dup := out[fields[0]]; dup {
			return nil, fmt.Errorf("floors line %d: %s listed twice", n, fields[0])
		}
		out[fields[0]] = v
	}
	return out, sc.Err()
}

// pct is run/total as a percentage.
func pct(sum [2]int) float64 { return 100 * float64(sum[0]) / float64(sum[1]) }

// checkFloors compares each package of the profile with its floor, writing
// one "package current floor" line per package to w, and returns what
// fails: a package under its floor, a package with no floor, and a floor
// naming a directory that is gone. Floors of packages the profile does not
// list (a partial run) are left alone.
func checkFloors(w io.Writer, root string, p profile, floors map[string]float64) []string {
	pkgs := p.packages()
	var names []string
	for name, sum := range pkgs {
		if sum[1] > 0 {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var fails []string
	fmt.Fprintf(w, "%-40s %8s %8s\n", "PACKAGE", "COVERAGE", "FLOOR")
	for _, name := range names {
		cur := pct(pkgs[name])
		floor, ok := floors[name]
		if !ok {
			fmt.Fprintf(w, "%-40s %7.1f%% %8s\n", name, cur, "none")
			fails = append(fails, fmt.Sprintf("%s: no floor (coverage %.1f%%): add the line %q", name, cur, floorLine(name, cur)))
			continue
		}
		fmt.Fprintf(w, "%-40s %7.1f%% %7.1f%%\n", name, cur, floor)
		if cur < floor {
			fails = append(fails, fmt.Sprintf("%s: coverage %.1f%% is under its floor %.1f%%: test what the change left untested", name, cur, floor))
		}
	}
	var stale []string
	for name := range floors {
		if st, err := os.Stat(filepath.Join(root, filepath.FromSlash(name))); err != nil || !st.IsDir() {
			stale = append(stale, fmt.Sprintf("%s: has a floor but is no directory: remove its line", name))
		}
	}
	sort.Strings(stale)
	return append(fails, stale...)
}

// floorMargin is how many points under today's coverage a new floor sits,
// so a run's scheduling (which branch of a select a test takes) cannot
// fail it.
const floorMargin = 3

// floorLine is the floors line for a package now at cur percent.
func floorLine(name string, cur float64) string {
	return fmt.Sprintf("%s %d", name, int(math.Max(0, math.Floor(cur)-floorMargin)))
}

// floorsHeader opens the floors file.
const floorsHeader = `# Per-package statement coverage floors, in percent, checked by
# hack/covercheck after make test's unit step (docs/development.md,
# "Coverage"). Each floor sits a few points under the package's coverage
# from its own tests when it was set. Regenerate: make cover-floors.
`

// writeFloors writes the floors file: each package of the profile at
// floorMargin points under its coverage, and the floors of packages the
// profile does not list as they were.
func writeFloors(w io.Writer, p profile, old map[string]float64) error {
	lines := map[string]string{}
	for name, v := range old {
		lines[name] = fmt.Sprintf("%s %s", name, strconv.FormatFloat(v, 'f', -1, 64))
	}
	for name, sum := range p.packages() {
		if sum[1] > 0 {
			lines[name] = floorLine(name, pct(sum))
		}
	}
	var names []string
	for name := range lines {
		names = append(names, name)
	}
	sort.Strings(names)
	if _, err := io.WriteString(w, floorsHeader); err != nil {
		return err
	}
	for _, name := range names {
		if _, err := fmt.Fprintln(w, lines[name]); err != nil {
			return err
		}
	}
	return nil
}
