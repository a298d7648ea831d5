package audit

import (
	"bufio"
	"encoding/json"
	"io"
	"time"
)

// logLine is the audit.k8s.io/v1 Event Write writes: the fields Read reads,
// at level Metadata (k8s.io/apiserver v0.37.2 pkg/apis/audit/v1/types.go:72-133).
type logLine struct {
	Kind                     string      `json:"kind"`
	APIVersion               string      `json:"apiVersion"`
	Level                    string      `json:"level"`
	AuditID                  string      `json:"auditID,omitempty"`
	Stage                    string      `json:"stage"`
	RequestURI               string      `json:"requestURI"`
	Verb                     string      `json:"verb"`
	User                     lineUser    `json:"user"`
	SourceIPs                []string    `json:"sourceIPs,omitempty"`
	UserAgent                string      `json:"userAgent,omitempty"`
	ResponseStatus           *lineStatus `json:"responseStatus,omitempty"`
	RequestReceivedTimestamp time.Time   `json:"requestReceivedTimestamp"`
	StageTimestamp           *time.Time  `json:"stageTimestamp,omitempty"`
}

type lineUser struct {
	Username string `json:"username"`
}

type lineStatus struct {
	Code int `json:"code"`
}

// Write writes events as an audit log Read reads back to the same events
// (Source and Line aside): one audit.k8s.io/v1 Event per line, at level
// Metadata, stage ResponseComplete (stageTimestamp Completed) when the
// request's end is known, else ResponseStarted. collect keeps so the
// watch requests of a log, a small part of it, in its bundle. The
// timeout travels in the request URI, as the server logs it.
func Write(w io.Writer, events []Event) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, e := range events {
		l := logLine{
			Kind: "Event", APIVersion: "audit.k8s.io/v1", Level: "Metadata", AuditID: e.AuditID, Stage: "ResponseStarted",
			RequestURI: e.RequestURI, Verb: e.Verb, User: lineUser{e.User}, SourceIPs: e.SourceIPs, UserAgent: e.UserAgent,
			RequestReceivedTimestamp: e.RequestReceived,
		}
		if !e.Completed.IsZero() {
			l.Stage, l.StageTimestamp = "ResponseComplete", &e.Completed
		}
		if e.Code != 0 {
			l.ResponseStatus = &lineStatus{e.Code}
		}
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return bw.Flush()
}
