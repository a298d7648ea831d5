package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const testModule = "example.com/m"

func TestParseProfile(t *testing.T) {
	in := "mode: atomic\n" +
		"example.com/m/internal/p/p.go:3.10,5.2 2 0\n" +
		"example.com/m/internal/p/p.go:7.10,9.2 1 4\n" +
		"example.com/m/internal/p/p.go:7.10,9.2 1 1\n" + // a second run of the same block
		"example.com/m/internal/p/q.go:3.10,5.2 3 0\n" +
		"example.com/m/internal/p/q.go:3.10,5.2 3 2\n" +
		"other.org/x/x.go:1.1,2.2 5 1\n"
	p, err := parseProfile(strings.NewReader(in), testModule)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p["x.go"]; ok || len(p) != 2 {
		t.Errorf("files %v, want internal/p/p.go and internal/p/q.go only", p)
	}
	if diff := cmp.Diff(map[string][2]int{"internal/p": {4, 6}}, p.packages()); diff != "" {
		t.Errorf("packages (-want +got):\n%s", diff)
	}
	for _, c := range []struct{ from, to, run, total int }{
		{1, 10, 1, 3}, {3, 5, 0, 2}, {6, 9, 1, 1}, {4, 8, 0, 0},
	} {
		run, total := p.covered("internal/p/p.go", c.from, c.to)
		if run != c.run || total != c.total {
			t.Errorf("covered(%d, %d) = %d/%d, want %d/%d", c.from, c.to, run, total, c.run, c.total)
		}
	}
}

func TestParseProfileRejects(t *testing.T) {
	for _, in := range []string{
		"",
		"mode: set\nexample.com/m/a.go 1 1\n",
		"mode: set\nexample.com/m/a.go:1.1-2.2 1 1\n",
		"mode: set\nexample.com/m/a.go:x.1,2.2 1 1\n",
		"mode: set\nexample.com/m/a.go:1.1,2.y 1 1\n",
		"mode: set\nexample.com/m/a.go:1.1,2.2 one 1\n",
		"mode: set\nexample.com/m/a.go:1.1,2.2 1 many\n",
		"mode: set\nexample.com/m/a.go:1.1,2.2 1\n",
	} {
		if _, err := parseProfile(strings.NewReader(in), testModule); err == nil {
			t.Errorf("parseProfile(%q) accepted it", in)
		}
	}
}
