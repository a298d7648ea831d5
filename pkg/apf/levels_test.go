package apf

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

var levels = []levelRow{
	{name: "catch-all", idle: true},
	{name: "exempt", executing: 1, dispatched: 2571},
	{name: "global-default", executing: 2, dispatched: 3},
	{name: "workload-low", active: 3, waiting: 17, executing: 24, dispatched: 918273, rejected: 12, timedout: 4, cancelled: 1, quiescing: true},
}

func TestParsePriorityLevels(t *testing.T) {
	tests := []struct {
		name    string
		columns []string
	}{
		{"v0.27 to v0.37", levelColumns},
		// Columns are read by header name: a release with fewer, more or
		// reordered columns parses too.
		{"fewer columns", []string{"PriorityLevelName", "ActiveQueues", "IsIdle", "IsQuiescing", "WaitingRequests", "ExecutingRequests"}},
		{"a column this parser does not know", append(append([]string{}, levelColumns...), "SeatsInUse")},
		{"reordered", []string{"PriorityLevelName", "ActiveQueues", "ExecutingRequests", "WaitingRequests", "CancelledRequests", "IsIdle"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dump := dumpLevels(tt.columns, levels...)
			got, skipped, err := ParsePriorityLevels(strings.NewReader(dump))
			if err != nil {
				t.Fatalf("ParsePriorityLevels: %v\n%s", err, dump)
			}
			var want []PriorityLevel
			for i, l := range levels {
				want = append(want, l.want(tt.columns, i+2))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s\ndump:\n%s", diff, dump)
			}
			if skipped.Count != 0 {
				t.Errorf("skipped %v", skipped)
			}
		})
	}
}

func TestParsePriorityLevelsSkipsBadRows(t *testing.T) {
	const header = "PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests, DispatchedRequests, RejectedRequests, TimedoutRequests, CancelledRequests\n"
	const good = "exempt, 0, false, false, 0, 1, 2571, 0, 0, 0\n"
	tests := []struct {
		name string
		row  string
		want string
	}{
		{"too few cells", "exempt, 0, false\n", "3 cells, want 10"},
		{"too many cells", "a,b, 0, false, false, 0, 1, 2571, 0, 0, 0\n", "11 cells, want 10"},
		{"bad integer", strings.Replace(good, "2571", "2.5k", 1), `field DispatchedRequests: "2.5k" is not an integer`},
		{"integer overflow", strings.Replace(good, "2571", "99999999999999999999", 1), `field DispatchedRequests: "99999999999999999999" is not an integer`},
		{"bad boolean", strings.Replace(good, "false", "no", 1), `field IsIdle: "no" is not a boolean`},
		{"empty name", strings.Replace(good, "exempt", "", 1), "field PriorityLevelName is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, skipped, err := ParsePriorityLevels(strings.NewReader(header + tt.row + good))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(Skips{Count: 1, First: []Skipped{{Line: 2, Reason: tt.want}}}, skipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
			want := []PriorityLevel{{Name: "exempt", ExecutingRequests: 1, DispatchedRequests: 2571, Line: 3}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("levels (-want +got):\n%s", diff)
			}
		})
	}
}

// A hostile dump of 50,000 unreadable rows: every one counted, the
// first MaxSkippedKept kept with their lines, the readable row read.
func TestParsePriorityLevelsKeepsTheFirstSkipped(t *testing.T) {
	const header = "PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests, DispatchedRequests, RejectedRequests, TimedoutRequests, CancelledRequests\n"
	const bad = 50_000
	var b strings.Builder
	b.WriteString(header)
	for i := range bad {
		fmt.Fprintf(&b, "level-%d, NaN, false, false, 0, 1, 2, 0, 0, 0\n", i)
	}
	b.WriteString("exempt, 0, false, false, 0, 1, 2571, 0, 0, 0\n")
	got, skipped, err := ParsePriorityLevels(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	var want []Skipped
	for i := range MaxSkippedKept {
		want = append(want, Skipped{Line: i + 2, Reason: `field ActiveQueues: "NaN" is not an integer`})
	}
	if diff := cmp.Diff(Skips{Count: bad, First: want}, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if len(got) != 1 || got[0].Name != "exempt" || got[0].Line != bad+2 {
		t.Errorf("levels %+v, want exempt's row at line %d", got, bad+2)
	}
}

func TestParsePriorityLevelsCRLF(t *testing.T) {
	dump := dumpLevels(levelColumns, levels...)
	want, _, err := ParsePriorityLevels(strings.NewReader(dump))
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := ParsePriorityLevels(strings.NewReader(strings.ReplaceAll(dump, "\n", "\r\n")))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CRLF dump (-LF +CRLF):\n%s", diff)
	}
}

func TestParsePriorityLevelsErrors(t *testing.T) {
	errIO := errors.New("stream reset")
	tests := []struct {
		name     string
		in       string
		wantLine int
		wantMsg  string
	}{
		{"empty", "", 0, "empty input: no dump_priority_levels header"},
		{"requests dump", dumpRequests(v037, true, slowRow), 1, `not an APF dump_priority_levels: header starts "PriorityLevelName, FlowSchemaName"`},
		{"one-cell header", "PriorityLevelName\n", 1, `header starts "PriorityLevelName"`},
		{"binary", "\x00\x01\x02", 1, "binary data"},
		{"line over the limit", strings.Repeat("y", maxLine+1), 1, "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, skipped, err := ParsePriorityLevels(strings.NewReader(tt.in))
			if got != nil || skipped.Count != 0 || skipped.First != nil {
				t.Errorf("ParsePriorityLevels returned %v, %v with the error", got, skipped)
			}
			golden.CheckLineError(t, err, tt.wantLine, tt.wantMsg)
		})
	}
	t.Run("I/O error", func(t *testing.T) {
		_, _, err := ParsePriorityLevels(&errReader{data: "PriorityLevelName, ActiveQueues\nexempt, 0\n", err: errIO})
		golden.CheckLineError(t, err, 0, "reading line 3")
		if !errors.Is(err, errIO) {
			t.Errorf("error %v does not wrap the reader's", err)
		}
	})
}
