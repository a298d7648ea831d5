package archtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// binarySection is the section of docs/development.md whose table lists
// every module the binary may link, with its measured size.
const binarySection = "## The binary"

// tableModules returns the modules of the first column of the table under
// the heading section of the Markdown doc: the rows whose first cell is a
// `code` span.
func tableModules(doc, section string) ([]string, error) {
	_, body, ok := strings.Cut("\n"+doc, "\n"+section+"\n")
	if !ok {
		return nil, fmt.Errorf("no heading %q", section)
	}
	if end := strings.Index(body, "\n## "); end >= 0 {
		body = body[:end]
	}
	var mods []string
	for _, line := range strings.Split(body, "\n") {
		cell, ok := strings.CutPrefix(line, "| `")
		if !ok {
			continue
		}
		mod, _, ok := strings.Cut(cell, "`")
		if !ok || mod == "" {
			return nil, fmt.Errorf("table row %q: no module in its first cell", line)
		}
		mods = append(mods, mod)
	}
	if len(mods) == 0 {
		return nil, fmt.Errorf("no table of modules under %q", section)
	}
	sort.Strings(mods)
	return mods, nil
}

// linkedModules lists the modules of the packages the binary links, as
// make build builds it (cgo off), from the module cache: no network.
func linkedModules(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if .Module}}{{.Module.Path}}{{end}}", "./cmd/kubectl-watch_doctor")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/kubectl-watch_doctor: %v", err)
	}
	seen := map[string]bool{}
	var mods []string
	for _, m := range strings.Fields(string(out)) {
		if !seen[m] {
			seen[m] = true
			mods = append(mods, m)
		}
	}
	sort.Strings(mods)
	return mods
}

// TestBinaryLinksOnlyTheTable fails when the binary links a module the
// size table of docs/development.md ("The binary") has no row for, and
// when a row names a module no longer linked: a new dependency is a
// decision, measured (make binsize) and written down.
func TestBinaryLinksOnlyTheTable(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "development.md"))
	if err != nil {
		t.Fatal(err)
	}
	table, err := tableModules(string(doc), binarySection)
	if err != nil {
		t.Fatalf("docs/development.md: %v", err)
	}
	if diff := cmp.Diff(table, linkedModules(t)); diff != "" {
		t.Errorf("modules the binary links against the table of docs/development.md %q (-table +linked): a + module is linked but not in the table (run make binsize, add its row or drop the import); a - row names a module no longer linked (delete it):\n%s", binarySection, diff)
	}
}

func TestTableModules(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string
		err       string
	}{
		{
			name: "rows of the section only",
			doc:  "# D\n## The binary\ntext\n| module | bytes |\n|---|---|\n| `b.io/x` | 1 |\n| `a.io/y` | 2 |\n| Go standard library | 3 |\n## Next\n| `c.io/z` | 4 |\n",
			want: []string{"a.io/y", "b.io/x"},
		},
		{name: "no section", doc: "# D\n## Other\n| `a.io/y` | 1 |\n", err: `no heading "## The binary"`},
		{name: "no rows", doc: "## The binary\nnone\n", err: "no table of modules"},
		{name: "unclosed code span", doc: "## The binary\n| `a.io/y | 1 |\n", err: "no module in its first cell"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tableModules(tt.doc, binarySection)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("tableModules (-want +got):\n%s", diff)
			}
		})
	}
}
