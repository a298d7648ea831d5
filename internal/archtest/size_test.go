package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The size limits of the house style: no source file over maxFileLines lines
// and no function or func literal over maxFuncLines lines, counted from the
// line of its func keyword to the line of its closing brace.
const (
	maxFileLines = 450
	maxFuncLines = 100
)

// funcSizeExempt are the trees the function limit leaves out: benchmarks
// (bench/) and the e2e module with its test programs (test/). The file
// limit holds for them too.
var funcSizeExempt = []string{"bench", "test"}

// oversized returns one line per limit src breaks, naming name:line: the
// file when it has more than maxFileLines lines, and, with funcs, each
// function or func literal longer than maxFuncLines lines.
func oversized(name string, src []byte, funcs bool) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parse %q: %w", name, err)
	}
	var out []string
	if n := fset.File(f.Pos()).LineCount(); n > maxFileLines {
		out = append(out, fmt.Sprintf("%s:1: file is %d lines (limit %d)", name, n, maxFileLines))
	}
	if !funcs {
		return out, nil
	}
	ast.Inspect(f, func(n ast.Node) bool {
		var what string
		switch n := n.(type) {
		case *ast.FuncDecl:
			what = "func " + n.Name.Name
		case *ast.FuncLit:
			what = "func literal"
		default:
			return true
		}
		start, end := fset.Position(n.Pos()), fset.Position(n.End())
		if lines := end.Line - start.Line + 1; lines > maxFuncLines {
			out = append(out, fmt.Sprintf("%s:%d: %s is %d lines (limit %d)", name, start.Line, what, lines, maxFuncLines))
		}
		return true
	})
	return out, nil
}

// sourceFiles lists the non-test .go files under root (the module and the
// e2e module inside it), as slash-separated paths relative to root, leaving
// out testdata and hidden directories.
func sourceFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go") {
			files = append(files, rel)
		}
		return nil
	})
	return files, err
}

// TestSourceSize fails naming file:line for every non-test source file over
// 450 lines and every function or func literal over 100 lines in one
// outside bench/ and test/. No source file is generated (none says "Code
// generated"), so none is left out.
func TestSourceSize(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := sourceFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no source files found under the module root")
	}
	for _, rel := range files {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		found, err := oversized(rel, src, !hasPrefix(rel, funcSizeExempt))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range found {
			t.Error(f)
		}
	}
}

// lines returns a Go source of n lines: a package clause, then body, then
// blank lines up to n.
func lines(body string, n int) string {
	s := "package p\n" + body
	if k := strings.Count(s, "\n"); k < n {
		s += strings.Repeat("\n", n-k)
	}
	return s
}

// funcOf returns a function named name spanning n lines.
func funcOf(name string, n int) string {
	return "func " + name + "() {\n" + strings.Repeat("\t_ = 0\n", n-2) + "}\n"
}

func TestOversized(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		skipFunc bool
		want     []string
	}{
		{name: "at the limits", src: lines(funcOf("f", 100), 450)},
		{
			name: "file one line over",
			src:  lines("", 451),
			want: []string{"x.go:1: file is 451 lines (limit 450)"},
		},
		{
			name:     "file and function over, functions not checked",
			src:      lines(funcOf("f", 101), 451),
			skipFunc: true,
			want:     []string{"x.go:1: file is 451 lines (limit 450)"},
		},
		{
			name: "function one line over",
			src:  lines(funcOf("f", 101), 0),
			want: []string{"x.go:2: func f is 101 lines (limit 100)"},
		},
		{
			name: "method",
			src:  lines("type T struct{}\n"+strings.Replace(funcOf("M", 120), "func ", "func (T) ", 1), 0),
			want: []string{"x.go:3: func M is 120 lines (limit 100)"},
		},
		{
			name: "func literal inside a short function",
			src:  lines("var v = "+strings.Replace(funcOf("", 101), "func ()", "func()", 1), 0),
			want: []string{"x.go:2: func literal is 101 lines (limit 100)"},
		},
		{
			name: "func literal inside a long function",
			src:  lines("func f() {\n\tg := "+strings.Replace(funcOf("", 102), "func ()", "func()", 1)+"\t_ = g\n}\n", 0),
			want: []string{
				"x.go:2: func f is 105 lines (limit 100)",
				"x.go:3: func literal is 102 lines (limit 100)",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := oversized("x.go", []byte(tt.src), !tt.skipFunc)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("oversized (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOversizedSyntaxError(t *testing.T) {
	_, err := oversized("bad.go", []byte("package p\nfunc {"), true)
	if err == nil || !strings.Contains(err.Error(), `"bad.go"`) {
		t.Fatalf("oversized(bad.go) error = %v, want one naming %q", err, "bad.go")
	}
}
