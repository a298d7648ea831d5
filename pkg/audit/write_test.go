package audit

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// What Write writes, Read reads back: the same watch requests, each on
// its own line, the other verbs and skipped lines gone.
func TestWriteReadsBack(t *testing.T) {
	in := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a1","stage":"ResponseStarted","requestURI":"/api/v1/pods?watch=true\u0026sendInitialEvents=true","verb":"watch","user":{"username":"system:serviceaccount:team-a:informer"},"sourceIPs":["10.1.2.3","127.0.0.1"],"userAgent":"informer/v1.2 (linux/amd64) \u202e","requestReceivedTimestamp":"2026-11-29T10:22:03.339100Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a2","stage":"ResponseComplete","requestURI":"/api/v1/pods","verb":"list","user":{"username":"u"},"requestReceivedTimestamp":"2026-11-29T10:22:04Z"}
not json
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a3","stage":"ResponseStarted","requestURI":"/api/v1/namespaces/x/configmaps?watch=1","verb":"watch","user":{"username":"dash"},"requestReceivedTimestamp":"2026-11-29T10:22:05.5Z"}
`
	orig, err := Read(context.Background(), strings.NewReader(in), "in", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, orig.Events); err != nil {
		t.Fatal(err)
	}
	back, err := Read(context.Background(), &buf, "out", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if back.Lines != 2 || back.SkippedCount != 0 || back.Others != 0 {
		t.Errorf("read back %d lines, %d skipped, %d others: want the 2 watch requests alone", back.Lines, len(back.Skipped), back.Others)
	}
	for i := range back.Events {
		back.Events[i].Source, back.Events[i].Line = orig.Events[i].Source, orig.Events[i].Line
	}
	if diff := cmp.Diff(orig.Events, back.Events); diff != "" {
		t.Errorf("events (-written +read back):\n%s", diff)
	}
}
