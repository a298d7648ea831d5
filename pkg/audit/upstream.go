package audit

import (
	"encoding/json"
	"fmt"
	"time"
)

// upstreamEvent is the part of an audit.k8s.io/v1 Event read here
// (k8s.io/apiserver v0.37.2 pkg/apis/audit/v1/types.go:72-133).
type upstreamEvent struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	AuditID    string `json:"auditID"`
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	SourceIPs                []string  `json:"sourceIPs"`
	UserAgent                string    `json:"userAgent"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
	StageTimestamp           time.Time `json:"stageTimestamp"`
	ResponseStatus           *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// upstreamLine reads one line of the server's own JSON lines.
func (s *scanner) upstreamLine(line []byte, n int) error {
	var e upstreamEvent
	if err := json.Unmarshal(line, &e); err != nil {
		s.sum.skip(n, "not JSON: "+err.Error())
		return nil
	}
	if e.Kind != "Event" || e.APIVersion != "audit.k8s.io/v1" {
		s.sum.skip(n, fmt.Sprintf("kind %q, apiVersion %q: not an audit.k8s.io/v1 Event", e.Kind, e.APIVersion))
		return nil
	}
	if s.sum.Format == "" {
		s.sum.Format = formatUpstream
	}
	r := rec{
		line: n, auditID: e.AuditID, user: e.User.Username, verb: e.Verb, uri: e.RequestURI, userAgent: e.UserAgent,
		sourceIPs: e.SourceIPs, received: e.RequestReceivedTimestamp, stageTime: e.StageTimestamp, start: true,
		end: e.Stage == "ResponseComplete" || e.Stage == "Panic",
	}
	if e.ResponseStatus != nil {
		r.code = e.ResponseStatus.Code
	}
	return s.add(&r)
}
