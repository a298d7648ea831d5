package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// hostileCapture is the t2 capture with a user name and a metric label
// that carry a right-to-left override (U+202E) and a tab, as a hostile or
// broken server can send them.
func hostileCapture(t *testing.T) string {
	t.Helper()
	src, dir := golden.Fixture("t2"), t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		switch e.Name() {
		case "apf-requests.txt":
			b = []byte(strings.ReplaceAll(string(b), "slow-informer", "slow\u202erem\trofni"))
		case "metrics.txt":
			b = []byte(strings.ReplaceAll(string(b), `resource="pods"`, "resource=\"po\u202eds\tx\""))
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestEveryCellIsEscaped: names from a server reach the terminal escaped
// (bidi controls, tabs, C0 and C1) in every text form of analyze and
// metrics, as they are in the advice.
func TestEveryCellIsEscaped(t *testing.T) {
	dir := hostileCapture(t)
	for _, args := range [][]string{
		{"analyze", dir, "--fail-on", "none"},
		{"analyze", dir, "--fail-on", "none", "-o", "wide"},
		{"analyze", dir, "--fail-on", "none", "-o", "name"},
		{"analyze", dir, "--fail-on", "none", "--no-headers"},
		{"metrics", dir},
		{"metrics", dir, "-o", "wide"},
	} {
		t.Run(args[0]+" "+strings.Join(args[2:], " "), func(t *testing.T) {
			code, out, errOut := run(t, nil, args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if i := strings.IndexAny(out, "\u202e\t"); i >= 0 {
				line := out[strings.LastIndex(out[:i], "\n")+1:]
				line, _, _ = strings.Cut(line, "\n")
				t.Errorf("%s prints a raw bidi control or tab: %q", args[0], line)
			}
			if !strings.Contains(out, `\u202e`) {
				t.Errorf("%s does not show the escaped name:\n%s", args[0], out)
			}
		})
	}
}
