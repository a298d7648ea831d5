package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
)

// The probe's unreadable dump_requests rows (issue 34) on a server
// without profiling: the first capture lists a watch, the second lists it
// in a row that cannot be read. Before, the row vanished, the watch
// counted as ended, and the report said no watch was stuck (exit 0).
// Now analyze names the file and the line, exits 2 with "incomplete:",
// and never says no watch is stuck.
func TestHostileAPFRowsAreIncomplete(t *testing.T) {
	t.Parallel()
	const good = "global-default, global-default, 3, -1, client-0, 2026-11-29T10:20:00Z, 1, 0, 0s, 2026-11-29T10:20:00Z, client-0, watch, /api/v1/namespaces/ns-0/pods, ns-0, , v1, pods, \n"
	header := "PriorityLevelName, FlowSchemaName, QueueIndex, RequestIndexInQueue, FlowDistingsher, ArriveTime, InitialSeats, FinalSeats, AdditionalLatency, StartTime, UserName, Verb, APIPath, Namespace, Name, APIVersion, Resource, SubResource\n"
	for _, tc := range []struct {
		name, row, reason string
	}{
		{"NaN seats", strings.Replace(good, " 1, 0,", " NaN, 0,", 1), `field InitialSeats: "NaN" is not an integer`},
		{"negative seats", strings.Replace(good, " 1, 0,", " -1, 0,", 1), "field InitialSeats: -1 is below 0"},
		{"bad time", strings.Replace(good, "0s, 2026-11-29T10:20:00Z", "0s, 2026-11-29T25:61:00Z", 1), `field StartTime: "2026-11-29T25:61:00Z" is not an RFC 3339 time`},
		{"an escape sequence in a time", strings.Replace(good, "0s, 2026-11-29T10:20:00Z", "0s, \x1b[2J", 1), `field StartTime: "\x1b[2J" is not an RFC 3339 time`},
		{"a cell missing", strings.Replace(good, "client-0, watch", "watch", 1), "17 cells, want 18"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dirs, err := dumpgen.WriteAPFOnlyCaptures(t.TempDir(), 1)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dirs[0], "apf-requests.txt"), []byte(header+good), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dirs[1], "apf-requests.txt"), []byte(header+tc.row), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := run(t, nil, append([]string{"analyze"}, dirs...)...)
			if code != ExitError || !strings.Contains(errOut, "incomplete:") {
				t.Errorf("exit %d, stderr %q; want %d and incomplete", code, errOut, ExitError)
			}
			want := "1 row could not be read in the APF dump_requests of " + dirs[1] + " (line 2: " + tc.reason + ")"
			if !strings.Contains(errOut, want) {
				t.Errorf("stderr %q lacks %q", errOut, want)
			}
			if strings.Contains(out, "no watch stuck") || strings.Contains(out, "\x1b") {
				t.Errorf("report claims an all-clear or holds an escape byte:\n%s", out)
			}
		})
	}
}
