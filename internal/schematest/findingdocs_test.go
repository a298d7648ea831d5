package schematest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// The generated table of finding types sits between these two lines of a
// Markdown file, header included (an HTML comment inside a table would end
// it).
const (
	beginFindingTypes = "<!-- finding types: generated from pkg/api/v1alpha1 FindingTypes by go test ./internal/schematest -update -->"
	endFindingTypes   = "<!-- end of finding types -->"
)

// findingDocs are the documents that carry a table of finding types, and
// the table each carries: the README's incident card says what to do, the
// docs/analyze.md reference when each is reported.
var findingDocs = []struct {
	path  string
	table func([]api.FindingTypeRow) string
}{
	{"README.md", cardTable},
	{filepath.Join("docs", "analyze.md"), ruleTable},
}

// cardTable is the README's table: each finding type, its severities and
// what to do.
func cardTable(rows []api.FindingTypeRow) string {
	var b strings.Builder
	b.WriteString("| FINDING | SEVERITY | do |\n|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.Type, r.SeverityRule, r.Do)
	}
	return b.String()
}

// ruleTable is docs/analyze.md's table: each finding type, its severities
// and the rule that reports it.
func ruleTable(rows []api.FindingTypeRow) string {
	var b strings.Builder
	b.WriteString("| finding | severity | rule |\n|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.Type, r.SeverityRule, r.Rule)
	}
	return b.String()
}

// withTable returns doc with the text between the markers replaced by
// table.
func withTable(doc, table string) (string, error) {
	begin := strings.Index(doc, beginFindingTypes+"\n")
	if begin < 0 {
		return "", fmt.Errorf("no line %q", beginFindingTypes)
	}
	start := begin + len(beginFindingTypes) + 1
	end := strings.Index(doc[start:], endFindingTypes+"\n")
	if end < 0 {
		return "", fmt.Errorf("no line %q after the first marker", endFindingTypes)
	}
	return doc[:start] + table + doc[start+end:], nil
}

// TestFindingTypeDocs keeps the README's and docs/analyze.md's tables of
// finding types what api.FindingTypes generates (go test -update rewrites
// them), so a finding type missing from the docs fails here.
func TestFindingTypeDocs(t *testing.T) {
	for _, d := range findingDocs {
		t.Run(d.path, func(t *testing.T) {
			path := filepath.Join(root(), d.path)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := withTable(string(b), d.table(api.FindingTypes()))
			if err != nil {
				t.Fatalf("%s: %v", d.path, err)
			}
			golden.AssertFile(t, path, []byte(got))
		})
	}
}

// TestFindingTypeCells holds each row to what a table cell can carry: one
// sentence, no pipe, no line break.
func TestFindingTypeCells(t *testing.T) {
	for _, r := range api.FindingTypes() {
		for name, cell := range map[string]string{"Rule": r.Rule, "Do": r.Do, "SeverityRule": r.SeverityRule} {
			if cell == "" || strings.ContainsAny(cell, "|\n") {
				t.Errorf("%s.%s = %q: want one line of text without a pipe", r.Type, name, cell)
			}
			if name != "SeverityRule" && (strings.Count(cell, ". ") > 0 || !strings.HasSuffix(cell, ".")) {
				t.Errorf("%s.%s = %q: want one sentence, ending in a full stop", r.Type, name, cell)
			}
		}
	}
}

// TestWithTableFailsWithoutMarkers: a document that lost its markers is
// an error, not a silent pass.
func TestWithTableFailsWithoutMarkers(t *testing.T) {
	for doc, wantErr := range map[string]bool{
		"# x\n":                         true,
		beginFindingTypes + "\n| a |\n": true,
		beginFindingTypes + "\nold\n" + endFindingTypes + "\n": false,
	} {
		got, err := withTable(doc, "new\n")
		if (err != nil) != wantErr {
			t.Errorf("withTable(%q): error %v, want error %v", doc, err, wantErr)
		}
		if err == nil {
			if diff := cmp.Diff(beginFindingTypes+"\nnew\n"+endFindingTypes+"\n", got); diff != "" {
				t.Errorf("withTable (-want +got):\n%s", diff)
			}
		}
	}
}
