package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// longBody is a function body of longFunc statement lines.
var longBody = strings.Repeat("\t_ = 0\n", longFunc)

// fixtureSource is internal/p/p.go of the crafted module: three long
// functions (Run, Skipped, T.Orphan) and a short one (Short). Run is at line
// 3, Skipped at 56, T.Orphan at 109, Short at 162.
var fixtureSource = "package p\n\n" +
	"func Run() {\n" + longBody + "}\n\n" +
	"func Skipped() {\n" + longBody + "}\n\n" +
	"func (t *T) Orphan() {\n" + longBody + "}\n\n" +
	"func Short() {}\n\ntype T struct{}\n"

// fixtureProfile runs Run and Short, not Skipped or T.Orphan; internal/q
// (no source on disk: only its figures matter) is 3 of 4 statements.
func fixtureProfile() string {
	block := func(file string, from, to, stmts, count int) string {
		return fmt.Sprintf("example.com/m/%s:%d.12,%d.2 %d %d\n", file, from, to, stmts, count)
	}
	return "mode: atomic\n" +
		block("internal/p/p.go", 3, 54, longFunc, 1) +
		block("internal/p/p.go", 56, 107, longFunc, 0) +
		block("internal/p/p.go", 109, 160, longFunc, 0) +
		block("internal/p/p.go", 162, 162, 1, 3) +
		block("internal/q/q.go", 3, 5, 3, 1) +
		block("internal/q/q.go", 7, 9, 1, 0)
}

// fixtureTree writes the crafted module and returns its root.
func fixtureTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.mod":               "module example.com/m\n\ngo 1.26\n",
		"internal/p/p.go":      fixtureSource,
		"internal/p/p_test.go": "package p\n\nimport \"testing\"\n\nfunc TestRun(t *testing.T) { Run() }\n",
		"internal/q/doc.go":    "package q\n",
		"cover.out":            fixtureProfile(),
	}
	for name, text := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestUnrunLongFuncs(t *testing.T) {
	root := fixtureTree(t)
	p, err := parseProfile(strings.NewReader(fixtureProfile()), testModule)
	if err != nil {
		t.Fatal(err)
	}
	got, err := unrunLongFuncs(root, p)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		fmt.Sprintf("internal/p/p.go:109 T.Orphan (%d lines)", longFunc+2),
		fmt.Sprintf("internal/p/p.go:56 Skipped (%d lines)", longFunc+2),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unrun long functions (-want +got):\n%s", diff)
	}
}

func TestCheckFloors(t *testing.T) {
	root := fixtureTree(t)
	p, err := parseProfile(strings.NewReader(fixtureProfile()), testModule)
	if err != nil {
		t.Fatal(err)
	}
	// internal/p is 51 of 151 statements (33.8%), internal/q 3 of 4 (75%).
	for _, c := range []struct {
		name   string
		floors map[string]float64
		want   []string
	}{
		{"all above", map[string]float64{"internal/p": 30, "internal/q": 75, "internal/gone-partial": 1}, nil},
		{"one under", map[string]float64{"internal/p": 34, "internal/q": 70}, []string{
			"internal/p: coverage 33.8% is under its floor 34.0%: test what the change left untested",
		}},
		{"missing and stale", map[string]float64{"internal/p": 30, "internal/r": 50}, []string{
			`internal/q: no floor (coverage 75.0%): add the line "internal/q 72"`,
			"internal/r: has a floor but is no directory: remove its line",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			floors := c.floors
			if _, ok := floors["internal/gone-partial"]; ok {
				// A floor whose package the profile does not list is kept
				// only while its directory exists.
				if err := os.MkdirAll(filepath.Join(root, "internal", "gone-partial"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			var out bytes.Buffer
			got := checkFloors(&out, root, p, floors)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("failures (-want +got):\n%s", diff)
			}
			if !strings.Contains(out.String(), "internal/p") || !strings.Contains(out.String(), "33.8%") {
				t.Errorf("table lacks internal/p's current figure:\n%s", out.String())
			}
		})
	}
}

func TestReadFloors(t *testing.T) {
	got, err := readFloors(strings.NewReader("# head\n\ninternal/a 70 # why\ninternal/b 12.5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]float64{"internal/a": 70, "internal/b": 12.5}, got); diff != "" {
		t.Errorf("floors (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"internal/a\n", "internal/a 70 80\n", "internal/a lots\n", "internal/a 101\n", "internal/a 1\ninternal/a 2\n"} {
		if _, err := readFloors(strings.NewReader(bad)); err == nil {
			t.Errorf("readFloors(%q) accepted it", bad)
		}
	}
}

func TestWriteFloors(t *testing.T) {
	p, err := parseProfile(strings.NewReader(fixtureProfile()), testModule)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := writeFloors(&out, p, map[string]float64{"internal/p": 90, "internal/z": 41.5}); err != nil {
		t.Fatal(err)
	}
	want := floorsHeader + "internal/p 30\ninternal/q 72\ninternal/z 41.5\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("floors file (-want +got):\n%s", diff)
	}
}
