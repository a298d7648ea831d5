package replay

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func goldenColumns(t *testing.T, scenario string) map[string]*api.Column {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "golden", scenario+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r api.Replay
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	cols := map[string]*api.Column{}
	for i := range r.Columns {
		cols[r.Columns[i].Name] = &r.Columns[i]
	}
	return cols
}

// TestCompareColumns: a column is identical to itself under another name;
// a changed counter or client is one difference naming both columns; the
// real unpatched and pr141899 columns of issue-131721 differ on the stuck
// client and agree on the healthy one.
func TestCompareColumns(t *testing.T) {
	cols := goldenColumns(t, "issue-131721")
	un, pr := cols[api.ColumnUnpatched], cols[api.ColumnPR141899]
	if un == nil || pr == nil {
		t.Fatalf("columns %v: want unpatched and pr141899", cols)
	}
	same := *un
	same.Name = "copy"
	if diffs := CompareColumns(un, &same); diffs != nil {
		t.Errorf("a column against itself: %q", diffs)
	}

	changed := *un
	changed.Name = "changed"
	changed.Counters = append([]api.Counters(nil), un.Counters...)
	changed.Counters[0].InitEvents++
	want := []string{"pods init events: 4000 in unpatched, 4001 in changed"}
	if diff := cmp.Diff(want, CompareColumns(un, &changed)); diff != "" {
		t.Errorf("one counter changed (-want +got):\n%s", diff)
	}

	fewer := *un
	fewer.Name = "fewer"
	fewer.Clients = un.Clients[:1]
	if got := CompareColumns(un, &fewer); !containsLine(got, "clients: 3 in unpatched, 1 in fewer") {
		t.Errorf("a client missing: %q", got)
	}

	seed := CompareColumns(un, pr)
	if !containsPrefix(seed, "slow-informer") {
		t.Errorf("unpatched vs pr141899: no difference for the stuck slow-informer: %q", seed)
	}
	if containsPrefix(seed, "healthy-client") {
		t.Errorf("unpatched vs pr141899: the healthy client differs: %q", seed)
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

func containsPrefix(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}
