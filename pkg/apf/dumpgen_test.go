package apf

import (
	"bytes"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// This file writes APF debug dumps the way k8s.io/apiserver
// pkg/util/flowcontrol/apf_controller_debug.go does: cells joined by ",\t"
// through a text/tabwriter (minwidth 8, padding 1, padded with spaces).

// release selects the columns of a k8s.io/apiserver release.
type release int

const (
	// v027 is k8s.io/apiserver v0.27: dump_requests lists waiting
	// requests only and has no StartTime column.
	v027 release = iota
	// v037 is k8s.io/apiserver v0.37: executing requests too, with
	// StartTime.
	v037
)

// reqRow is one request as dumpRequests prints it.
type reqRow struct {
	pl, fs          string
	iq, ir          int
	fd              string
	arrive          time.Time
	initial, final  int
	latency         time.Duration
	start           time.Time
	user, verb      string
	path, ns, name  string
	group, version  string
	resource, subre string
}

// groupVersion is schema.GroupVersion.String.
func groupVersion(group, version string) string {
	if group != "" {
		return group + "/" + version
	}
	return version
}

func writeRow(w *tabwriter.Writer, cells ...string) { w.Write([]byte(strings.Join(cells, ",\t"))) }

func dumpRequests(rel release, details bool, rows ...reqRow) string {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 8, 0, 1, ' ', 0)
	header := []string{"PriorityLevelName", "FlowSchemaName", "QueueIndex", "RequestIndexInQueue", "FlowDistingsher", "ArriveTime", "InitialSeats", "FinalSeats", "AdditionalLatency"}
	if rel >= v037 {
		header = append(header, "StartTime")
	}
	writeRow(tw, header...)
	if details {
		tw.Write([]byte(",\t"))
		writeRow(tw, "UserName", "Verb", "APIPath", "Namespace", "Name", "APIVersion", "Resource", "SubResource")
	}
	tw.Write([]byte("\n"))
	for _, r := range rows {
		cells := []string{r.pl, r.fs, strconv.Itoa(r.iq), strconv.Itoa(r.ir), r.fd, r.arrive.UTC().Format(time.RFC3339Nano),
			strconv.Itoa(r.initial), strconv.Itoa(r.final), r.latency.String()}
		if rel >= v037 {
			cells = append(cells, r.start.UTC().Format(time.RFC3339Nano))
		}
		writeRow(tw, cells...)
		if details {
			tw.Write([]byte(",\t"))
			writeRow(tw, r.user, r.verb, r.path, r.ns, r.name, groupVersion(r.group, r.version), r.resource, r.subre)
		}
		tw.Write([]byte("\n"))
	}
	tw.Flush()
	return b.String()
}

// want is the Request ParseRequests must return for r at line.
func (r reqRow) want(rel release, details bool, line int) Request {
	q := Request{PriorityLevel: r.pl, FlowSchema: r.fs, QueueIndex: r.iq, IndexInQueue: r.ir, FlowDistinguisher: r.fd,
		ArriveTime: r.arrive.UTC(), InitialSeats: r.initial, FinalSeats: r.final, AdditionalLatency: r.latency, Line: line}
	if rel >= v037 {
		q.StartTime = r.start.UTC()
	}
	if details {
		q.User, q.Verb, q.Path, q.Namespace, q.Name = r.user, r.verb, r.path, r.ns, r.name
		q.APIVersion, q.Resource, q.Subresource = groupVersion(r.group, r.version), r.resource, r.subre
	}
	return q
}

// levelRow is one priority level as dumpPriorityLevels prints it.
type levelRow struct {
	name                                                          string
	active                                                        int
	idle, quiescing                                               bool
	waiting, executing, dispatched, rejected, timedout, cancelled int
}

var levelColumns = []string{"PriorityLevelName", "ActiveQueues", "IsIdle", "IsQuiescing", "WaitingRequests", "ExecutingRequests",
	"DispatchedRequests", "RejectedRequests", "TimedoutRequests", "CancelledRequests"}

func (l levelRow) cell(column string) string {
	switch column {
	case "PriorityLevelName":
		return l.name
	case "ActiveQueues":
		return strconv.Itoa(l.active)
	case "IsIdle":
		return strconv.FormatBool(l.idle)
	case "IsQuiescing":
		return strconv.FormatBool(l.quiescing)
	case "WaitingRequests":
		return strconv.Itoa(l.waiting)
	case "ExecutingRequests":
		return strconv.Itoa(l.executing)
	case "DispatchedRequests":
		return strconv.Itoa(l.dispatched)
	case "RejectedRequests":
		return strconv.Itoa(l.rejected)
	case "TimedoutRequests":
		return strconv.Itoa(l.timedout)
	case "CancelledRequests":
		return strconv.Itoa(l.cancelled)
	}
	return "42" // a column this parser does not know
}

// dumpLevels prints levels with the given columns (levelColumns for
// v0.27 to v0.37).
func dumpLevels(columns []string, levels ...levelRow) string {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 8, 0, 1, ' ', 0)
	writeRow(tw, columns...)
	tw.Write([]byte("\n"))
	for _, l := range levels {
		cells := make([]string, len(columns))
		for i, c := range columns {
			cells[i] = l.cell(c)
		}
		writeRow(tw, cells...)
		tw.Write([]byte("\n"))
	}
	tw.Flush()
	return b.String()
}

// want is the PriorityLevel ParsePriorityLevels must return for l at
// line, given the columns the dump has.
func (l levelRow) want(columns []string, line int) PriorityLevel {
	has := map[string]bool{}
	for _, c := range columns {
		has[c] = true
	}
	pick := func(c string, v int) int {
		if has[c] {
			return v
		}
		return 0
	}
	return PriorityLevel{Name: l.name, ActiveQueues: pick("ActiveQueues", l.active), IsIdle: has["IsIdle"] && l.idle,
		IsQuiescing: has["IsQuiescing"] && l.quiescing, WaitingRequests: pick("WaitingRequests", l.waiting),
		ExecutingRequests: pick("ExecutingRequests", l.executing), DispatchedRequests: pick("DispatchedRequests", l.dispatched),
		RejectedRequests: pick("RejectedRequests", l.rejected), TimedoutRequests: pick("TimedoutRequests", l.timedout),
		CancelledRequests: pick("CancelledRequests", l.cancelled), Line: line}
}
