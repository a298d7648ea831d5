package probe

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/client-go/rest"
)

// APFRequest is one row of /debug/api_priority_and_fairness/dump_requests
// with includeRequestDetails.
type APFRequest struct {
	PriorityLevel string
	FlowSchema    string
	// RequestIndexInQueue is -1 for an executing request, its position for
	// a queued one.
	RequestIndexInQueue string
	InitialSeats        string
	UserName            string
	Verb                string
	APIPath             string
	Namespace           string
	Resource            string
	// ArriveTime is the request's arrival as printed (RFC 3339).
	ArriveTime string
}

// Executing reports whether the request holds seats (is not queued).
func (r APFRequest) Executing() bool { return r.RequestIndexInQueue == "-1" }

// ParseAPFRequests parses the comma-separated, space-padded table of
// dump_requests. Columns are found by their header names.
func ParseAPFRequests(dump string) ([]APFRequest, error) {
	lines := strings.Split(strings.TrimRight(dump, "\n"), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "PriorityLevelName") {
		return nil, fmt.Errorf("not an APF request dump: %.80q", dump)
	}
	split := func(line string) []string {
		fields := strings.Split(line, ",")
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		return fields
	}
	col := make(map[string]int)
	for i, h := range split(lines[0]) {
		col[h] = i
	}
	for _, h := range []string{"PriorityLevelName", "FlowSchemaName", "RequestIndexInQueue", "InitialSeats", "UserName", "Verb", "APIPath", "Namespace", "Resource"} {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("APF request dump has no %q column (was includeRequestDetails=1 given?)", h)
		}
	}
	var out []APFRequest
	for _, line := range lines[1:] {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := split(line)
		get := func(h string) string {
			if i := col[h]; i < len(f) {
				return f[i]
			}
			return ""
		}
		out = append(out, APFRequest{
			PriorityLevel:       get("PriorityLevelName"),
			FlowSchema:          get("FlowSchemaName"),
			RequestIndexInQueue: get("RequestIndexInQueue"),
			InitialSeats:        get("InitialSeats"),
			UserName:            get("UserName"),
			Verb:                get("Verb"),
			APIPath:             get("APIPath"),
			Namespace:           get("Namespace"),
			Resource:            get("Resource"),
			ArriveTime:          get("ArriveTime"),
		})
	}
	return out, nil
}

// APFRequests fetches and parses
// /debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1.
func APFRequests(ctx context.Context, c rest.Interface) ([]APFRequest, error) {
	b, err := c.Get().AbsPath("/debug/api_priority_and_fairness/dump_requests").
		Param("includeRequestDetails", "1").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("GET /debug/api_priority_and_fairness/dump_requests: %w", err)
	}
	return ParseAPFRequests(string(b))
}
