package apf

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

var (
	t0 = time.Date(2026, 11, 29, 10, 22, 3, 339182246, time.UTC)

	// The rows of the t2 capture, and a few more kinds.
	exemptRow = reqRow{pl: "exempt", fs: "exempt", iq: -1, ir: -1, arrive: t0.Add(150 * time.Second), initial: 1,
		start: t0.Add(150 * time.Second), user: "admin", verb: "get", path: "/debug/api_priority_and_fairness/dump_requests"}
	slowRow = reqRow{pl: "global-default", fs: "global-default", iq: 111, ir: -1, fd: "slow-informer", arrive: t0, initial: 1,
		start: t0.Add(32923 * time.Nanosecond), user: "slow-informer", verb: "watch", path: "/api/v1/namespaces/rand2/pods",
		ns: "rand2", version: "v1", resource: "pods"}
	waitingRow = reqRow{pl: "workload-low", fs: "service-accounts", iq: 7, ir: 2, fd: "system:serviceaccount:kube-system:deployment-controller",
		arrive: t0.Add(time.Minute), initial: 8, final: 3, latency: 1500 * time.Millisecond,
		user: "system:serviceaccount:kube-system:deployment-controller", verb: "list", path: "/apis/apps/v1/namespaces/kube-system/deployments",
		ns: "kube-system", group: "apps", version: "v1", resource: "deployments"}
	subresourceRow = reqRow{pl: "workload-high", fs: "kube-controller-manager", iq: 3, ir: -1, fd: "kube-system",
		arrive: t0.Add(-time.Hour), initial: 1, latency: time.Minute, start: t0.Add(-time.Hour),
		user: "system:kube-controller-manager", verb: "update", path: "/api/v1/namespaces/kube-system/pods/p-1/status",
		ns: "kube-system", name: "p-1", version: "v1", resource: "pods", subre: "status"}
)

func TestParseRequests(t *testing.T) {
	rows := []reqRow{exemptRow, slowRow, waitingRow, subresourceRow}
	for _, rel := range []release{v027, v037} {
		for _, details := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/details=%v", map[release]string{v027: "v0.27", v037: "v0.37"}[rel], details), func(t *testing.T) {
				dump := dumpRequests(rel, details, rows...)
				got, err := ParseRequests(strings.NewReader(dump))
				if err != nil {
					t.Fatalf("ParseRequests: %v\n%s", err, dump)
				}
				want := &Requests{HasDetails: details}
				for i, r := range rows {
					want.Requests = append(want.Requests, r.want(rel, details, i+2))
				}
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("mismatch (-want +got):\n%s\ndump:\n%s", diff, dump)
				}
			})
		}
	}
}

// TestParseRequestsCommas covers values holding commas, which split into
// extra cells and are put back by anchoring on the cells of fixed form.
func TestParseRequestsCommas(t *testing.T) {
	withUser := func(r reqRow, user string) reqRow { r.user, r.fd = user, user; return r }
	withPath := func(r reqRow, path string) reqRow { r.path = path; return r }
	nonResource := reqRow{pl: "exempt", fs: "probes", iq: -1, ir: -1, arrive: t0, initial: 1, start: t0,
		user: "system:anonymous", verb: "get", path: "/healthz/etcd,poststarthook"}
	tests := []struct {
		name    string
		rel     release
		details bool
		row     reqRow
	}{
		{"user and distinguisher", v037, true, withUser(slowRow, "CN=Jane,O=Example")},
		{"user and distinguisher with many commas", v037, true, withUser(slowRow, "a,b,,c,")},
		{"path", v037, true, nonResource},
		{"user and path", v037, true, withPath(withUser(nonResource, "x,y"), "/x,y/z")},
		{"exempt user without distinguisher", v037, true, func() reqRow { r := withUser(exemptRow, "CN=admin,O=system:masters"); r.fd = ""; return r }()},
		{"distinguisher without details", v037, false, withUser(slowRow, "CN=Jane,O=Example")},
		{"v0.27 user and distinguisher", v027, true, withUser(waitingRow, "CN=Jane,O=Example")},
		{"v0.27 distinguisher without details", v027, false, withUser(waitingRow, "a,b")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dump := dumpRequests(tt.rel, tt.details, exemptRow, tt.row)
			got, err := ParseRequests(strings.NewReader(dump))
			if err != nil {
				t.Fatal(err)
			}
			want := &Requests{HasDetails: tt.details, Requests: []Request{exemptRow.want(tt.rel, tt.details, 2), tt.row.want(tt.rel, tt.details, 3)}}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s\ndump:\n%s", diff, dump)
			}
		})
	}
}

// requestsHeader is the v0.37 header with details, unaligned.
const requestsHeader = "PriorityLevelName, FlowSchemaName, QueueIndex, RequestIndexInQueue, FlowDistingsher, ArriveTime, InitialSeats, FinalSeats, AdditionalLatency, StartTime, UserName, Verb, APIPath, Namespace, Name, APIVersion, Resource, SubResource\n"

func TestParseRequestsSkipsBadRows(t *testing.T) {
	good := "global-default, global-default, 111, -1, u, 2026-11-29T10:22:03.339182246Z, 1, 0, 0s, 2026-11-29T10:22:03.339215169Z, u, watch, /api/v1/pods, , , v1, pods, \n"
	tests := []struct {
		name string
		row  string
		want string
	}{
		{"too few cells", "global-default, global-default, 111\n", "3 cells, want 18"},
		{"extra commas and no arrive time", "global-default, global-default, 111, -1, a,b, yesterday, 1, 0, 0s, 2026-11-29T10:22:03Z, u, watch, /api, , , v1, pods, \n", "19 cells, want 18, and the extra commas could not be placed"},
		{"extra commas and no path", "global-default, global-default, 111, -1, u, 2026-11-29T10:22:03Z, 1, 0, 0s, 2026-11-29T10:22:03Z, a,b, watch, api, , , v1, pods, \n", "19 cells, want 18, and the extra commas could not be placed"},
		{"bad queue index", strings.Replace(good, "111", "x", 1), `field QueueIndex: "x" is not an integer`},
		{"bad index in queue", strings.Replace(good, "-1", "-", 1), `field RequestIndexInQueue: "-" is not an integer`},
		{"bad seats", strings.Replace(good, " 1, 0,", " 1.5, 0,", 1), `field InitialSeats: "1.5" is not an integer`},
		{"bad arrive time", strings.Replace(good, "2026-11-29T10:22:03.339182246Z", "10:22", 1), `field ArriveTime: "10:22" is not an RFC 3339 time`},
		{"bad start time", strings.Replace(good, "2026-11-29T10:22:03.339215169Z", "never", 1), `field StartTime: "never" is not an RFC 3339 time`},
		{"bad latency", strings.Replace(good, "0s", "1 fortnight", 1), `field AdditionalLatency: "1 fortnight" is not a duration`},
		{"empty priority level", strings.Replace(good, "global-default, ", " , ", 1), "field PriorityLevelName is empty"},
		{"integer overflow", strings.Replace(good, "111", "99999999999999999999", 1), `field QueueIndex: "99999999999999999999" is not an integer`},
		// The probe's rows (issue 34): each was dropped without a word.
		{"NaN seats", strings.Replace(good, " 1, 0,", " NaN, 0,", 1), `field InitialSeats: "NaN" is not an integer`},
		{"infinite seats", strings.Replace(good, " 1, 0,", " +Inf, 0,", 1), `field InitialSeats: "+Inf" is not an integer`},
		{"negative seats", strings.Replace(good, " 1, 0,", " -3, 0,", 1), "field InitialSeats: -3 is below 0"},
		{"negative final seats", strings.Replace(good, " 1, 0,", " 1, -1,", 1), "field FinalSeats: -1 is below 0"},
		{"queue index below -1", strings.Replace(good, "111", "-7", 1), "field QueueIndex: -7 is below -1"},
		{"index in queue below -1", strings.Replace(good, "111, -1", "111, -2", 1), "field RequestIndexInQueue: -2 is below -1"},
		{"negative latency", strings.Replace(good, "0s", "-5s", 1), `field AdditionalLatency: "-5s" is negative`},
		{"month 13", strings.Replace(good, "2026-11-29T10:22:03.339215169Z", "2026-13-45T10:22:03Z", 1), `field StartTime: "2026-13-45T10:22:03Z" is not an RFC 3339 time`},
		{"NaN time", strings.Replace(good, "2026-11-29T10:22:03.339215169Z", "NaN", 1), `field StartTime: "NaN" is not an RFC 3339 time`},
		{"executing, never started", strings.Replace(good, "2026-11-29T10:22:03.339215169Z", "0001-01-01T00:00:00Z", 1), "field StartTime: the zero time on an executing request"},
		{"a control character in a time", strings.Replace(good, "2026-11-29T10:22:03.339215169Z", "2026-11-29T10:22:03\x1b[2JZ", 1), `field StartTime: "2026-11-29T10:22:03\x1b[2JZ" is not an RFC 3339 time`},
		{"an escape sequence in a number", strings.Replace(good, " 1, 0,", " \x1b[31m1, 0,", 1), `field InitialSeats: "\x1b[31m1" is not an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := requestsHeader + tt.row + "\n" + good
			got, err := ParseRequests(strings.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]Skipped{{Line: 2, Reason: tt.want}}, got.Skipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
			if len(got.Requests) != 1 || got.Requests[0].Line != 4 || got.Requests[0].User != "u" {
				t.Errorf("the good row after the bad one: %+v", got.Requests)
			}
		})
	}
}

func TestParseRequestsCRLF(t *testing.T) {
	dump := dumpRequests(v037, true, exemptRow, slowRow, waitingRow)
	want, err := ParseRequests(strings.NewReader(dump))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseRequests(strings.NewReader("\r\n" + strings.ReplaceAll(dump, "\n", "\r\n")))
	if err != nil {
		t.Fatal(err)
	}
	for i := range want.Requests {
		want.Requests[i].Line++ // the leading blank line
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CRLF dump (-LF +CRLF):\n%s", diff)
	}
}

// errReader returns data, then err.
type errReader struct {
	data string
	err  error
}

func (r *errReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestParseRequestsErrors(t *testing.T) {
	errIO := errors.New("stream reset")
	tests := []struct {
		name     string
		in       io.Reader
		wantLine int
		wantMsg  string
	}{
		{"empty", strings.NewReader(""), 0, "empty input: no dump_requests header"},
		{"blank lines", strings.NewReader("\n  \n\r\n"), 0, "empty input"},
		{"priority levels dump", strings.NewReader(dumpLevels(levelColumns, levelRow{name: "exempt"})), 1, `not an APF dump_requests: header starts "PriorityLevelName, ActiveQueues"`},
		{"HTML error page", strings.NewReader("\n<html><body>forbidden</body></html>\n"), 2, "not an APF dump_requests"},
		{"binary", strings.NewReader("\x1f\x8b\x08\x00\x00\x00"), 1, "binary data"},
		{"NUL in a row", strings.NewReader(requestsHeader + "a\x00b\n"), 2, "binary data"},
		{"unknown detail columns", strings.NewReader(strings.Replace(requestsHeader, "SubResource", "Subresource, Extra", 1)), 1, "unknown request detail columns"},
		{"line over the limit", strings.NewReader(requestsHeader + strings.Repeat("x", maxLine+1) + "\n"), 2, "longer than"},
		{"I/O error", &errReader{data: requestsHeader, err: errIO}, 0, "reading line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRequests(tt.in)
			if got != nil {
				t.Errorf("ParseRequests returned %+v with the error", got)
			}
			golden.CheckLineError(t, err, tt.wantLine, tt.wantMsg)
			if tt.name == "I/O error" && !errors.Is(err, errIO) {
				t.Errorf("error %v does not wrap the reader's", err)
			}
		})
	}
}

func TestParseRequestsHeaderOnly(t *testing.T) {
	for _, details := range []bool{true, false} {
		got, err := ParseRequests(strings.NewReader(dumpRequests(v037, details)))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&Requests{HasDetails: details}, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("details=%v (-want +got):\n%s", details, diff)
		}
	}
}

// A dump with many unreadable rows counts them all and keeps the first
// MaxSkippedKept, with their lines, never all of them.
func TestParseRequestsCountsSkippedRows(t *testing.T) {
	good := "global-default, global-default, 111, -1, u, 2026-11-29T10:22:03.339182246Z, 1, 0, 0s, 2026-11-29T10:22:03.339215169Z, u, watch, /api/v1/pods, , , v1, pods, \n"
	bad := strings.Replace(good, " 1, 0,", " NaN, 0,", 1)
	got, err := ParseRequests(strings.NewReader(requestsHeader + strings.Repeat(bad, MaxSkippedKept+5) + good))
	if err != nil {
		t.Fatal(err)
	}
	if got.SkippedRows != MaxSkippedKept+5 || got.SkippedCount() != MaxSkippedKept+5 || len(got.Skipped) != MaxSkippedKept {
		t.Fatalf("%d rows skipped, %d kept; want %d, %d", got.SkippedRows, len(got.Skipped), MaxSkippedKept+5, MaxSkippedKept)
	}
	if first, last := got.Skipped[0], got.Skipped[MaxSkippedKept-1]; first.Line != 2 || last.Line != MaxSkippedKept+1 {
		t.Errorf("kept lines %d to %d, want 2 to %d", first.Line, last.Line, MaxSkippedKept+1)
	}
	if len(got.Requests) != 1 || got.Requests[0].Line != MaxSkippedKept+7 {
		t.Errorf("the good row after the bad ones: %+v", got.Requests)
	}
}

// Control characters in a name are the server's to send: the row is read
// as it is (the report escapes them before a terminal sees them).
func TestParseRequestsKeepsControlCharacters(t *testing.T) {
	row := "global-default, global-default, 111, -1, u, 2026-11-29T10:22:03Z, 1, 0, 0s, 2026-11-29T10:22:03Z, \x1b[31mroot\x07, watch, /api/v1/pods, , , v1, pods, \n"
	got, err := ParseRequests(strings.NewReader(requestsHeader + row))
	if err != nil {
		t.Fatal(err)
	}
	if got.SkippedCount() != 0 || len(got.Requests) != 1 || got.Requests[0].User != "\x1b[31mroot\x07" {
		t.Errorf("requests %+v, skipped %v; want the row with its user as sent", got.Requests, got.Skipped)
	}
}
