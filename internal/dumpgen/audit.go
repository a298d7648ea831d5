package dumpgen

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// auditLag is how many requests later a request's ResponseComplete is
// written after its ResponseStarted.
const auditLag = 1000

// WriteAPFOnlyAuditLog writes the kube-apiserver audit log (upstream JSON
// lines, Metadata level, about 1 KB an event) of the server of
// WriteAPFOnlyCaptures(dir, rows), events lines long: the watch of each
// of the rows (client-i's of /api/v1/namespaces/ns-i/pods, received 3 ms
// before its APF start, still open: ResponseStarted alone), then the
// history of the same users and paths over the hours before: watches
// 100 ms apart, half of which end (ResponseComplete 1,000 requests
// later, after 5 minutes of their 300 to 599 s timeout) and half of
// which the log never shows ending (a policy that omits the stage, or
// requests still open when the log was cut). Every request is of a user
// and path of the APF dumps; only the rows' own are received near their
// starts. It returns the requests written.
func WriteAPFOnlyAuditLog(w io.Writer, rows, events int) (int, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	lines, requests := 0, 0
	var pending []int // requests whose ResponseComplete is due
	history := apfOnlyStart.Add(-20 * time.Hour)
	for lines < events {
		i := requests
		requests++
		if i < rows {
			writeAuditEvent(bw, i, i, apfOnlyStart.Add(time.Duration(i)*time.Millisecond-3*time.Millisecond), false)
			lines++
			continue
		}
		recv := history.Add(time.Duration(i-rows) * 100 * time.Millisecond)
		writeAuditEvent(bw, i, i%rows, recv, false)
		lines++
		if i%2 == 0 {
			pending = append(pending, i)
		}
		if len(pending) > 0 && pending[0] <= i-auditLag && lines < events {
			j := pending[0]
			pending = pending[1:]
			writeAuditEvent(bw, j, j%rows, history.Add(time.Duration(j-rows)*100*time.Millisecond), true)
			lines++
		}
	}
	return requests, bw.Flush()
}

// writeAuditEvent writes a stage of request i of client c: its
// ResponseStarted, or its ResponseComplete 5 minutes after recv.
func writeAuditEvent(w io.Writer, i, c int, recv time.Time, complete bool) {
	stage, st, status := "ResponseStarted", recv.Add(1200*time.Microsecond), ""
	if complete {
		stage, st, status = "ResponseComplete", recv.Add(5*time.Minute), `"responseStatus":{"metadata":{},"code":200},`
	}
	fmt.Fprintf(w, `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"%08x-1d5b-4d8e-9f1e-%012x","stage":"%s",`+
		`"requestURI":"/api/v1/namespaces/ns-%d/pods?allowWatchBookmarks=true\u0026resourceVersion=%d\u0026timeoutSeconds=%d\u0026watch=true","verb":"watch",`+
		`"user":{"username":"client-%d","uid":"%08x-aaaa-bbbb-cccc-%012x","groups":["system:serviceaccounts","system:serviceaccounts:team-%d","system:authenticated"],`+
		`"extra":{"authentication.kubernetes.io/node-name":["node-%d"],"authentication.kubernetes.io/pod-name":["client-%d-5d8f7c9b6d-x2x9k"]}},`+
		`"sourceIPs":["10.%d.%d.%d"],"userAgent":"client-%d/v1.%d.0 (linux/amd64) kubernetes/abcdef0","objectRef":{"resource":"pods","namespace":"ns-%d","apiVersion":"v1"},%s`+
		`"requestReceivedTimestamp":"%s","stageTimestamp":"%s","annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":"RBAC: allowed by RoleBinding \"informers/team-%d\""}}`+"\n",
		i, i, stage, c, 100000+i, 300+i%300, c, c, c, c%50, c%100, c,
		(c>>8)&0xff, c&0xff, 1+i%7, c, c%40, c, status,
		recv.Format(time.RFC3339Nano), st.Format(time.RFC3339Nano), c%50)
}

// WriteAPFOnlyAudit writes the captures of WriteAPFOnlyCaptures(dir,
// rows) and, unless dir/audit.jsonl is there, their server's audit log of
// events lines (WriteAPFOnlyAuditLog) as dir/audit.jsonl; it returns the
// captures' directories and the log's path.
func WriteAPFOnlyAudit(dir string, rows, events int) ([]string, string, error) {
	dirs, err := WriteAPFOnlyCaptures(dir, rows)
	if err != nil {
		return nil, "", err
	}
	log := filepath.Join(dir, "audit.jsonl")
	if _, err := os.Stat(log); err == nil {
		return dirs, log, nil
	}
	f, err := os.Create(log + ".tmp")
	if err != nil {
		return nil, "", err
	}
	_, err = WriteAPFOnlyAuditLog(f, rows, events)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(log+".tmp", log)
	}
	return dirs, log, err
}
