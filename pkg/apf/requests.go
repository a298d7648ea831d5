package apf

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// detailColumns are the columns includeRequestDetails=1 adds, in order
// (apf_controller_debug.go:162-171).
var detailColumns = []string{"UserName", "Verb", "APIPath", "Namespace", "Name", "APIVersion", "Resource", "SubResource"}

// ParseRequests reads a dump_requests dump. Rows it cannot read are listed
// in Skipped with their line; a dump with no header is an error.
//
// Cells are separated by commas, so a value holding a comma (a user name
// or flow distinguisher from an identity provider, a path) splits into
// extra cells. Such rows are recovered by anchoring on the cells whose form
// is fixed: ArriveTime is an RFC 3339 time right after FlowDistingsher, the
// path starts with "/", and the last five detail cells are Kubernetes names.
func ParseRequests(r io.Reader) (*Requests, error) {
	rs := newRows(r)
	header, ok, err := rs.next()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("empty input: no dump_requests header")
	}
	if len(header) < 2 || header[0] != "PriorityLevelName" || header[1] != "FlowSchemaName" {
		return nil, &SyntaxError{LineNo: rs.line, Msg: fmt.Sprintf("not an APF dump_requests: header starts %q, want %q", strings.Join(header[:min(2, len(header))], ", "), RequestsHeader)}
	}
	out := &Requests{}
	baseLen := len(header)
	for i, h := range header {
		if h == "UserName" {
			baseLen = i
			out.HasDetails = true
			break
		}
	}
	if out.HasDetails {
		if got := header[baseLen:]; strings.Join(got, ",") != strings.Join(detailColumns, ",") {
			return nil, &SyntaxError{LineNo: rs.line, Msg: fmt.Sprintf("unknown request detail columns %q, want %q", got, detailColumns)}
		}
	}
	base := header[:baseLen]
	idx := headerIndex(base)
	var skipped Skips
	for {
		cells, raw, ok, err := rs.nextRaw()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		req, reason := parseRequestRow(cells, raw, base, idx, out.HasDetails)
		if reason != "" {
			skipped.add(rs.line, reason)
			continue
		}
		req.Line = rs.line
		out.Requests = append(out.Requests, req)
	}
	out.SkippedRows, out.Skipped = skipped.Count, skipped.First
	return out, nil
}

func parseRequestRow(cells, raw, base []string, idx map[string]int, details bool) (Request, string) {
	want := len(base)
	if details {
		want += len(detailColumns)
	}
	baseCells, detailCells := cells, []string(nil)
	switch {
	case len(cells) < want:
		return Request{}, fmt.Sprintf("%d cells, want %d", len(cells), want)
	case len(cells) == want:
		baseCells, detailCells = cells[:len(base)], cells[len(base):]
	default:
		var ok bool
		baseCells, detailCells, ok = recoverCommas(cells, raw, base, idx, details)
		if !ok {
			return Request{}, fmt.Sprintf("%d cells, want %d, and the extra commas could not be placed", len(cells), want)
		}
	}
	get := func(name string) string {
		if i, ok := idx[name]; ok && i < len(baseCells) {
			return baseCells[i]
		}
		return ""
	}
	var req Request
	req.PriorityLevel = get("PriorityLevelName")
	req.FlowSchema = get("FlowSchemaName")
	req.FlowDistinguisher = get("FlowDistingsher")
	var err error
	for _, f := range []struct {
		name string
		dst  *int
		min  int // -1: the indices of a request that never queued or is executing
	}{{"QueueIndex", &req.QueueIndex, -1}, {"RequestIndexInQueue", &req.IndexInQueue, -1}, {"InitialSeats", &req.InitialSeats, 0}, {"FinalSeats", &req.FinalSeats, 0}} {
		s := get(f.name)
		if s == "" {
			continue
		}
		if *f.dst, err = strconv.Atoi(s); err != nil {
			return Request{}, fmt.Sprintf("field %s: %q is not an integer", f.name, s)
		}
		if *f.dst < f.min {
			return Request{}, fmt.Sprintf("field %s: %d is below %d", f.name, *f.dst, f.min)
		}
	}
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"ArriveTime", &req.ArriveTime}, {"StartTime", &req.StartTime}} {
		s := get(f.name)
		if s == "" {
			continue
		}
		if *f.dst, err = parseTime(s); err != nil {
			return Request{}, fmt.Sprintf("field %s: %q is not an RFC 3339 time", f.name, s)
		}
	}
	if s := get("AdditionalLatency"); s != "" {
		if req.AdditionalLatency, err = time.ParseDuration(s); err != nil {
			return Request{}, fmt.Sprintf("field AdditionalLatency: %q is not a duration", s)
		}
		if req.AdditionalLatency < 0 {
			return Request{}, fmt.Sprintf("field AdditionalLatency: %q is negative", s)
		}
	}
	if _, ok := idx["StartTime"]; ok && req.Executing() && req.StartTime.IsZero() {
		// Upstream prints the zero time for a request still waiting; one
		// executing has started (apf_controller_debug.go:187).
		return Request{}, "field StartTime: the zero time on an executing request"
	}
	if details {
		d := detailCells
		req.User, req.Verb, req.Path, req.Namespace = d[0], d[1], d[2], d[3]
		req.Name, req.APIVersion, req.Resource, req.Subresource = d[4], d[5], d[6], d[7]
	}
	if req.PriorityLevel == "" {
		return Request{}, "field PriorityLevelName is empty"
	}
	return req, ""
}

// knownVerbs are the request verbs the API server records
// (k8s.io/apiserver pkg/endpoints/request/requestinfo.go).
var knownVerbs = map[string]bool{
	"get": true, "list": true, "watch": true, "create": true, "update": true, "patch": true,
	"delete": true, "deletecollection": true, "proxy": true,
}

// recoverCommas rebuilds the cells of a row in which FlowDistingsher,
// UserName or APIPath held commas. cells are trimmed, raw are not: a value
// is rebuilt from its raw pieces and trimmed once, since the tabwriter's
// padding only follows the separating commas. It reports false when the
// row does not fit the known column forms.
func recoverCommas(cells, raw, base []string, idx map[string]int, details bool) (baseCells, detailCells []string, ok bool) {
	join := func(from, to int) string { return strings.TrimSpace(strings.Join(raw[from:to], ",")) }
	fd, hasFD := idx["FlowDistingsher"]
	at, hasAT := idx["ArriveTime"]
	if !hasFD || !hasAT || at != fd+1 {
		return nil, nil, false
	}
	// The first cell after FlowDistingsher that reads as a time is ArriveTime.
	j := -1
	for k := fd; k < len(cells); k++ {
		if _, err := parseTime(cells[k]); err == nil {
			j = k
			break
		}
	}
	if j < fd {
		return nil, nil, false
	}
	after := len(base) - at // ArriveTime and the base cells after it
	if j+after > len(cells) {
		return nil, nil, false
	}
	baseCells = append(append(append([]string{}, cells[:fd]...), join(fd, j)), cells[j:j+after]...)
	restAt := j + after
	rest := cells[restAt:]
	if !details {
		return baseCells, nil, len(rest) == 0
	}
	if len(rest) < len(detailColumns) {
		return nil, nil, false
	}
	if len(rest) == len(detailColumns) {
		return baseCells, rest, true
	}
	tail := rest[len(rest)-5:] // Namespace, Name, APIVersion, Resource, SubResource
	mid := rest[:len(rest)-5]  // UserName..., Verb, APIPath...
	midEnd := restAt + len(mid)
	// The verb is the cell before the path; prefer a split where it is a
	// known verb, since a user name may hold ", /".
	k := -1
	for i := 2; i < len(mid); i++ {
		if strings.HasPrefix(mid[i], "/") && knownVerbs[mid[i-1]] {
			k = i
			break
		}
	}
	for i := 2; k < 0 && i < len(mid); i++ {
		if strings.HasPrefix(mid[i], "/") {
			k = i
		}
	}
	if k < 0 {
		if len(mid) < 3 || !strings.HasPrefix(mid[len(mid)-1], "/") {
			return nil, nil, false
		}
		k = len(mid) - 1
	}
	detailCells = append([]string{join(restAt, restAt+k-1), mid[k-1], join(restAt+k, midEnd)}, tail...)
	return baseCells, detailCells, true
}
