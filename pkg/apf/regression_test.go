// Regression tests for bugs found by review and fuzzing; each names the
// input that used to fail.

package apf

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FIXED(commas): a value holding ", " (comma and space) comes back without
// the space: rows.next trims every cell and recoverCommas joins the pieces
// with ",", so the user and flow distinguisher "Doe, Jane" read as
// "Doe,Jane", and the path "/healthz/a, b" as "/healthz/a,b". A client
// matched by user name would then not be found.
//
// Minimal input (v0.37 with details; one row):
//
//	PriorityLevelName, FlowSchemaName, QueueIndex, RequestIndexInQueue, FlowDistingsher, ArriveTime, InitialSeats, FinalSeats, AdditionalLatency, StartTime, UserName, Verb, APIPath, Namespace, Name, APIVersion, Resource, SubResource
//	global-default, global-default, 111, -1, Doe, Jane, 2026-11-29T10:22:03Z, 1, 0, 0s, 2026-11-29T10:22:03Z, Doe, Jane, watch, /api/v1/pods, , , v1, pods,
//
// Fix (requests.go): keep the raw, untrimmed cells next to the trimmed
// ones, and have recoverCommas join the raw pieces of a value with "," and
// trim the result once. The tabwriter pads only after the separator comma,
// so the joined raw pieces are the value plus outer padding.
func TestBugCommaSpaceLost(t *testing.T) {
	r := slowRow
	r.user, r.fd = "Doe, Jane", "Doe, Jane"
	p := reqRow{pl: "exempt", fs: "probes", iq: -1, ir: -1, arrive: t0, initial: 1, start: t0,
		user: "system:anonymous", verb: "get", path: "/healthz/a, b"}
	dump := dumpRequests(v037, true, r, p)
	got, err := ParseRequests(strings.NewReader(dump))
	if err != nil {
		t.Fatal(err)
	}
	want := &Requests{HasDetails: true, Requests: []Request{r.want(v037, true, 2), p.want(v037, true, 3)}}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("BUG: values with \", \" (-want +got):\n%s\ndump:\n%s", diff, dump)
	}
}

// TestUserNameWithCommaAndSlash: a user name holding ", /" splits so that
// the cell before the path is a known verb.
func TestUserNameWithCommaAndSlash(t *testing.T) {
	dump := "PriorityLevelName, FlowSchemaName, QueueIndex, RequestIndexInQueue, FlowDistingsher, ArriveTime, InitialSeats, FinalSeats, AdditionalLatency, StartTime, UserName, Verb, APIPath, Namespace, Name, APIVersion, Resource, SubResource\n" +
		"global-default, global-default, 1, -1, x,y,/z, 2026-11-29T10:22:03Z, 1, 0, 0s, 2026-11-29T10:22:03Z, x,y,/z, watch, /api/v1/pods, , , v1, pods, \n"
	rs, err := ParseRequests(strings.NewReader(dump))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.Requests) != 1 {
		t.Fatalf("requests = %+v, skipped %+v", rs.Requests, rs.Skipped)
	}
	r := rs.Requests[0]
	if r.User != "x,y,/z" || r.Verb != "watch" || r.Path != "/api/v1/pods" || r.FlowDistinguisher != "x,y,/z" {
		t.Errorf("user %q verb %q path %q distinguisher %q", r.User, r.Verb, r.Path, r.FlowDistinguisher)
	}
}
