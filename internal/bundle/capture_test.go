package bundle

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// Every parser's syntax error names its line through the one interface.
var (
	_ lineError = (*stacks.SyntaxError)(nil)
	_ lineError = (*apf.SyntaxError)(nil)
	_ lineError = (*metrics.SyntaxError)(nil)
)

// TestReadNamesFileAndLine: a syntax error of any parser reaches the user
// as file:line: reason, whichever parser found it.
func TestReadNamesFileAndLine(t *testing.T) {
	tests := []struct {
		kind    api.FileKind
		name    string
		input   string
		wantErr string
	}{
		{api.FileGoroutineDebug2, "dump.txt", strings.Repeat("goroutine 1 [running]:\nmain.main()\n\t/x.go:1 +0x1\n\n", 2), "dump.txt:5: a second goroutine dump starts here"},
		{api.FileGoroutineDebug1, "agg.txt", "goroutine profile: total x\n", "agg.txt:1: bad goroutine total"},
		{api.FileAPFRequests, "apf.txt", "PriorityLevelName, nope\n", "apf.txt:1: not an APF dump_requests"},
		{api.FileCapturedAt, "captured-at.txt", "yesterday\n", `captured-at.txt:1: capture time "yesterday" is not RFC 3339`},
	}
	for _, tc := range tests {
		t.Run(string(tc.kind), func(t *testing.T) {
			c := NewCapture("c", "", time.Time{}, "")
			err := c.Read(tc.kind, tc.name, strings.NewReader(tc.input))
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Errorf("Read(%s) = %v, want an error starting %q", tc.kind, err, tc.wantErr)
			}
		})
	}
}

// TestReadKeepsTheRichestGoroutineInput: of two goroutine inputs of one
// capture, the debug=2 dump is read and the debug=1 one noted as not used,
// whatever their order.
func TestReadKeepsTheRichestGoroutineInput(t *testing.T) {
	for _, order := range [][]api.FileKind{
		{api.FileGoroutineDebug1, api.FileGoroutineDebug2},
		{api.FileGoroutineDebug2, api.FileGoroutineDebug1},
	} {
		c := NewCapture("c", "", time.Time{}, "")
		for _, k := range order {
			f, err := os.Open(golden.Fixture("t2", FileName(k)))
			if err != nil {
				t.Fatal(err)
			}
			err = c.Read(k, FileName(k), f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
		if _, ok := c.Files()[api.FileGoroutineDebug2]; !ok || len(c.Files()) != 1 {
			t.Errorf("order %v: files %v, want the debug=2 dump alone", order, c.Files())
		}
		if c.Dump == nil || c.Dump.Aggregated() {
			t.Errorf("order %v: the dump read is not the debug=2 one", order)
		}
	}
}
