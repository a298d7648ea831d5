package apf

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// Fuzz targets for the two parsers. Run one with
//
//	go test ./pkg/apf -run '^$' -fuzz '^FuzzParseRequests$' -fuzztime 60s

func addFixtures(f *testing.F, name string) {
	f.Helper()
	for _, c := range captures {
		b, err := os.ReadFile(golden.Fixture(c, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// nonBlankLines counts the lines bufio.ScanLines yields that hold more
// than white space.
func nonBlankLines(data []byte) int {
	n := 0
	for _, l := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			n++
		}
	}
	return n
}

// checkParseErr checks the error of a parser: nil, a *SyntaxError within
// the input, or "empty input" for input without a non-blank line.
func checkParseErr(t *testing.T, data []byte, err error) {
	t.Helper()
	var se *SyntaxError
	switch {
	case err == nil:
	case errors.As(err, &se):
		if se.Line() < 1 || se.Line() > bytes.Count(data, []byte("\n"))+1 {
			t.Fatalf("SyntaxError at line %d of %d: %v", se.Line(), bytes.Count(data, []byte("\n"))+1, err)
		}
	case nonBlankLines(data) == 0 && strings.Contains(err.Error(), "empty input"):
	default:
		t.Fatalf("error %T %v, want a *SyntaxError", err, err)
	}
}

// checkRows checks that every row after the header was either parsed or
// skipped (counted: skippedCount), in order, with line numbers inside the
// input; skipped lists the lines of the first skipped rows.
func checkRows(t *testing.T, data []byte, parsed, skipped []int, skippedCount int) {
	t.Helper()
	lines := bytes.Count(data, []byte("\n")) + 1
	if len(parsed)+skippedCount != nonBlankLines(data)-1 {
		t.Fatalf("%d rows parsed and %d skipped, input has %d non-blank lines after the header", len(parsed), skippedCount, nonBlankLines(data)-1)
	}
	if len(skipped) > skippedCount {
		t.Fatalf("%d skipped rows listed, %d counted", len(skipped), skippedCount)
	}
	for _, ls := range [][]int{parsed, skipped} {
		prev := 0
		for _, l := range ls {
			if l <= prev || l > lines {
				t.Fatalf("row at line %d after line %d, %d lines", l, prev, lines)
			}
			prev = l
		}
	}
}

// plain reports whether a value can be printed through the tabwriter and
// read back unchanged.
func plain(vs ...string) bool {
	for _, v := range vs {
		if strings.ContainsAny(v, ",\t\r\n\v\f") || v != strings.TrimSpace(v) {
			return false
		}
	}
	return true
}

func FuzzParseRequests(f *testing.F) {
	addFixtures(f, "apf-requests.txt")
	f.Add([]byte(dumpRequests(v027, true, waitingRow)))
	f.Add([]byte(dumpRequests(v027, false, waitingRow)))
	f.Add([]byte(dumpRequests(v037, false, exemptRow, slowRow)))
	r := slowRow
	r.user, r.fd, r.path = "CN=Jane,O=Example", "CN=Jane,O=Example", "/x,y"
	f.Add([]byte(dumpRequests(v037, true, r, subresourceRow)))
	f.Add([]byte(requestsHeader + "global-default, global-default, 111, -1, a,b, yesterday, 1, 0, 0s, 2026-11-29T10:22:03Z, u, watch, /api, , , v1, pods, \n"))
	// The probe's hostile rows (issue 34): NaN and negative numbers, bad
	// times, control characters, an executing row never started, more
	// bad rows than are kept.
	good := "global-default, global-default, 111, -1, u, 2026-11-29T10:22:03Z, 1, 0, 0s, 2026-11-29T10:22:03Z, u, watch, /api/v1/pods, , , v1, pods, \n"
	for _, bad := range []string{
		strings.Replace(good, " 1, 0,", " NaN, 0,", 1),
		strings.Replace(good, " 1, 0,", " -3, -1,", 1),
		strings.Replace(good, "111, -1", "-9, -2", 1),
		strings.Replace(good, "0s", "-1h", 1),
		strings.Replace(good, "0s, 2026-11-29T10:22:03Z", "0s, 2026-13-45T99:00:00Z", 1),
		strings.Replace(good, "0s, 2026-11-29T10:22:03Z", "0s, 0001-01-01T00:00:00Z", 1),
		strings.Replace(good, " u, watch", " \x1b[31mu\x07, watch", 1),
		strings.Replace(good, " 1, 0,", " \x1b[2J1, 0,", 1),
	} {
		f.Add([]byte(requestsHeader + bad + good))
	}
	f.Add([]byte(requestsHeader + strings.Repeat(strings.Replace(good, " 1, 0,", " NaN, 0,", 1), MaxSkippedKept+3) + good))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseRequests(bytes.NewReader(data))
		checkParseErr(t, data, err)
		if err != nil {
			if got != nil {
				t.Fatalf("ParseRequests returned %+v with error %v", got, err)
			}
			return
		}
		var parsed, skipped []int
		for _, q := range got.Requests {
			parsed = append(parsed, q.Line)
			if q.PriorityLevel == "" || q.Executing() != (q.IndexInQueue < 0) || q.Seats() != q.InitialSeats {
				t.Fatalf("request %+v", q)
			}
			if q.InitialSeats < 0 || q.FinalSeats < 0 || q.QueueIndex < -1 || q.IndexInQueue < -1 || q.AdditionalLatency < 0 {
				t.Fatalf("a negative count or latency read: %+v", q)
			}
			if !got.HasDetails && (q.User != "" || q.Verb != "" || q.Path != "") {
				t.Fatalf("details without the detail columns: %+v", q)
			}
		}
		for _, s := range got.Skipped {
			skipped = append(skipped, s.Line)
		}
		if len(got.Skipped) > MaxSkippedKept || len(got.Skipped) < min(got.SkippedRows, MaxSkippedKept) {
			t.Fatalf("%d skipped rows kept of %d: want the first %d", len(got.Skipped), got.SkippedRows, MaxSkippedKept)
		}
		checkRows(t, data, parsed, skipped, got.SkippedRows)

		// What was read prints back as v0.37 would print it and reads the
		// same, unless a value holds a separator.
		var rows []reqRow
		for _, q := range got.Requests {
			group, version, _ := strings.Cut(q.APIVersion, "/")
			if version == "" {
				group, version = "", q.APIVersion
			}
			if !plain(q.PriorityLevel, q.FlowSchema, q.FlowDistinguisher, q.User, q.Verb, q.Path, q.Namespace, q.Name, q.APIVersion, q.Resource, q.Subresource) ||
				strings.Contains(q.APIVersion, "/") && (group == "" || version == "") ||
				q.Executing() && q.StartTime.IsZero() { // read from a dump without StartTime: v0.37 prints the zero time
				return
			}
			rows = append(rows, reqRow{pl: q.PriorityLevel, fs: q.FlowSchema, iq: q.QueueIndex, ir: q.IndexInQueue, fd: q.FlowDistinguisher,
				arrive: q.ArriveTime, initial: q.InitialSeats, final: q.FinalSeats, latency: q.AdditionalLatency, start: q.StartTime,
				user: q.User, verb: q.Verb, path: q.Path, ns: q.Namespace, name: q.Name, group: group, version: version,
				resource: q.Resource, subre: q.Subresource})
		}
		again, err := ParseRequests(strings.NewReader(dumpRequests(v037, got.HasDetails, rows...)))
		if err != nil {
			t.Fatalf("reading the printed rows back: %v", err)
		}
		if diff := cmp.Diff(got.Requests, again.Requests, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(Request{}, "Line")); diff != "" {
			t.Fatalf("printed rows read back differently (-first +again):\n%s", diff)
		}
	})
}

func FuzzParsePriorityLevels(f *testing.F) {
	addFixtures(f, "apf-priority-levels.txt")
	f.Add([]byte(dumpLevels(levelColumns, levels...)))
	f.Add([]byte(dumpLevels([]string{"PriorityLevelName", "ActiveQueues", "ExecutingRequests", "SeatsInUse"}, levels...)))
	f.Add([]byte("PriorityLevelName, ActiveQueues, IsIdle\nexempt, x, maybe\n\n , 1, true\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, skipped, err := ParsePriorityLevels(bytes.NewReader(data))
		checkParseErr(t, data, err)
		if err != nil {
			if got != nil || skipped.Count != 0 || skipped.First != nil {
				t.Fatalf("ParsePriorityLevels returned %v, %v with error %v", got, skipped, err)
			}
			return
		}
		if len(skipped.First) != min(skipped.Count, MaxSkippedKept) {
			t.Fatalf("%d skipped rows kept of %d, want the first %d", len(skipped.First), skipped.Count, MaxSkippedKept)
		}
		var parsed, skippedLines []int
		for _, l := range got {
			if l.Name == "" {
				t.Fatalf("level without a name: %+v", l)
			}
			parsed = append(parsed, l.Line)
		}
		for _, s := range skipped.First {
			skippedLines = append(skippedLines, s.Line)
		}
		checkRows(t, data, parsed, skippedLines, skipped.Count)
		for _, l := range got {
			if !plain(l.Name) {
				return
			}
		}
		var rows []levelRow
		for _, l := range got {
			rows = append(rows, levelRow{name: l.Name, active: l.ActiveQueues, idle: l.IsIdle, quiescing: l.IsQuiescing,
				waiting: l.WaitingRequests, executing: l.ExecutingRequests, dispatched: l.DispatchedRequests,
				rejected: l.RejectedRequests, timedout: l.TimedoutRequests, cancelled: l.CancelledRequests})
		}
		again, _, err := ParsePriorityLevels(strings.NewReader(dumpLevels(levelColumns, rows...)))
		if err != nil {
			t.Fatalf("reading the printed rows back: %v", err)
		}
		if diff := cmp.Diff(got, again, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(PriorityLevel{}, "Line")); diff != "" {
			t.Fatalf("printed rows read back differently (-first +again):\n%s", diff)
		}
	})
}
