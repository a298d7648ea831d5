package cli

import (
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// hostileCapture is the t2 capture with a user name and a metric label
// that carry a right-to-left override (U+202E) and a tab, as a hostile or
// broken server can send them.
func hostileCapture(t *testing.T) string {
	t.Helper()
	return fakeapiserver.EditCapture(t, golden.Fixture("t2"), func(name string, b []byte) []byte {
		switch name {
		case "apf-requests.txt":
			return []byte(strings.ReplaceAll(string(b), "slow-informer", "slow\u202erem\trofni"))
		case "metrics.txt":
			return []byte(strings.ReplaceAll(string(b), `resource="pods"`, "resource=\"po\u202eds\tx\""))
		}
		return b
	})
}

// TestEveryCellIsEscaped: names from a server reach the terminal escaped
// (bidi controls, tabs, C0 and C1) in every text form of analyze and
// metrics, as they are in the advice.
func TestEveryCellIsEscaped(t *testing.T) {
	t.Parallel()
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
