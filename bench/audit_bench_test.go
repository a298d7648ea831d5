package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/benchmetrics"
	"github.com/watch-doctor/watch-doctor/pkg/audit"
)

// auditEvents is the production scale of issue 34: a million audit
// watch events (500,000 watch requests, two stages each).
const auditEvents = 1_000_000

// BenchmarkAuditScan reads a generated kube-apiserver audit log of
// auditEvents watch events (WATCH_DOCTOR_BENCH_AUDIT_EVENTS overrides)
// through audit.Scan, as --audit-log does, streamed from a file:
// Metadata-level events of about 900 bytes, each request's
// ResponseStarted and ResponseComplete 1,000 lines apart, 2,000 users,
// 500 paths. It reports MB/s, ns/event, B/op, allocs/op and the peak
// heap (the gate in README.md: under 10 s and 256 MiB), and fails unless
// every request is read.
func BenchmarkAuditScan(b *testing.B) {
	n := auditEventsOf(b)
	path := filepath.Join(dumpDir, fmt.Sprintf("audit-%d.jsonl", n))
	size, err := ensureAuditLog(path, n)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	heap := benchmetrics.StartHeap()
	start := time.Now()
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		watches := 0
		s, err := audit.Scan(context.Background(), f, path, audit.DefaultLimits(), func(*audit.Event) error {
			watches++
			return nil
		})
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		if watches != n/2 || s.SkippedCount != 0 {
			b.Fatalf("%d watch requests, %d skipped: want %d and none", watches, s.SkippedCount, n/2)
		}
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N)/float64(n), "ns/event")
	heap.Report(b)
}

// auditEventsOf is auditEvents, or WATCH_DOCTOR_BENCH_AUDIT_EVENTS when
// set.
func auditEventsOf(b *testing.B) int {
	s := os.Getenv("WATCH_DOCTOR_BENCH_AUDIT_EVENTS")
	if s == "" {
		return auditEvents
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// ensureAuditLog writes the log of n events at path unless a file of
// that name is there, and returns its size.
func ensureAuditLog(path string, n int) (int64, error) {
	if st, err := os.Stat(path); err == nil {
		return st.Size(), nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	writeAuditLog(w, n)
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return 0, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// writeAuditLog writes n/2 watch requests as the log backend does at
// Metadata level: each request's ResponseStarted, and its
// ResponseComplete 1,000 lines later.
func writeAuditLog(w io.Writer, n int) {
	const lag = 1000
	base := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	event := func(i int, complete bool) {
		user := i % 2000
		ns, res := i%97, []string{"configmaps", "secrets", "pods", "services", "endpoints"}[i%5]
		recv := base.Add(time.Duration(i) * time.Millisecond)
		stage, st, status := "ResponseStarted", recv.Add(1200*time.Microsecond), ""
		if complete {
			stage, st, status = "ResponseComplete", recv.Add(5*time.Minute), `"responseStatus":{"metadata":{},"code":200},`
		}
		fmt.Fprintf(w, `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"%08x-1d5b-4d8e-9f1e-%012x","stage":"%s",`+
			`"requestURI":"/api/v1/namespaces/ns-%d/%s?allowWatchBookmarks=true\u0026resourceVersion=%d\u0026timeoutSeconds=%d\u0026watch=true","verb":"watch",`+
			`"user":{"username":"system:serviceaccount:team-%d:informer-%d","uid":"%08x-aaaa-bbbb-cccc-%012x","groups":["system:serviceaccounts","system:serviceaccounts:team-%d","system:authenticated"],`+
			`"extra":{"authentication.kubernetes.io/node-name":["node-%d"],"authentication.kubernetes.io/pod-name":["informer-%d-5d8f7c9b6d-x2x9k"]}},`+
			`"sourceIPs":["10.%d.%d.%d"],"userAgent":"informer-%d/v1.%d.0 (linux/amd64) kubernetes/abcdef0","objectRef":{"resource":"%s","namespace":"ns-%d","apiVersion":"v1"},%s`+
			`"requestReceivedTimestamp":"%s","stageTimestamp":"%s","annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":"RBAC: allowed by RoleBinding \"informers/team-%d\""}}`+"\n",
			i, i, stage, ns, res, 100000+i, 300+i%300, user%50, user, user, user, user%50, user%100, user,
			user>>8, user&0xff, 1+i%7, user%200, user%40, res, ns, status,
			recv.Format(time.RFC3339Nano), st.Format(time.RFC3339Nano), user%50)
	}
	reqs := n / 2
	for i := range reqs {
		event(i, false)
		if i >= lag {
			event(i-lag, true)
		}
	}
	for i := max(0, reqs-lag); i < reqs; i++ {
		event(i, true)
	}
}
