package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/watch-doctor/watch-doctor/internal/benchmetrics"
	"github.com/watch-doctor/watch-doctor/internal/cli"
	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
)

// auditJoinRows are the APF rows the joined audit benchmark's log is of.
const auditJoinRows = 2000

// BenchmarkAnalyzeAuditJoined runs `analyze t1 t2 --audit-log FILE -o
// json` in this process: the APF-only captures of auditJoinRows stuck
// watches (dumpgen.WriteAPFOnlyCaptures) and their server's audit log of
// auditEvents watch events (WATCH_DOCTOR_BENCH_AUDIT_EVENTS overrides;
// dumpgen.WriteAPFOnlyAuditLog): every request of a user and path of the
// rows, half of the history never shown ending. The audit log goes
// through the engine's join, not only audit.Scan. Every finding must be
// joined to its own request (its source address). It reports the CPU
// time and the peak heap; the gate (issue 34: under 10 s and 256 MiB) is
// checked as a process by `wdbench auditjoin` (README.md, "Audit logs").
func BenchmarkAnalyzeAuditJoined(b *testing.B) {
	n := auditEventsOf(b)
	dir := filepath.Join(dumpDir, fmt.Sprintf("auditjoin-%d-%d", auditJoinRows, n))
	dirs, log, err := dumpgen.WriteAPFOnlyAudit(dir, auditJoinRows, n)
	if err != nil {
		b.Fatal(err)
	}
	args := append(append([]string{"analyze"}, dirs...), "--audit-log", log, "-o", "json")
	b.ReportAllocs()
	heap := benchmetrics.StartHeap()
	t := benchmetrics.Start()
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		var errOut bytes.Buffer
		streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
		if code := cli.Main(streams, args); code != cli.ExitFindings {
			b.Fatalf("exit code %d, want %d (critical findings): %s", code, cli.ExitFindings, errOut.String())
		}
	}
	t.ReportOp(b)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
	heap.Report(b)
	if joined := joinedFindings(b, out.Bytes()); joined != auditJoinRows {
		b.Fatalf("%d findings joined to their audit event, want the %d rows", joined, auditJoinRows)
	}
}

// joinedFindings counts the findings of a JSON report whose client has a
// source address.
func joinedFindings(b *testing.B, report []byte) int {
	b.Helper()
	var r struct {
		Findings []struct {
			Client *struct {
				SourceIPs []string `json:"sourceIPs"`
			} `json:"client"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(report, &r); err != nil {
		b.Fatal(err)
	}
	joined := 0
	for _, f := range r.Findings {
		if f.Client != nil && len(f.Client.SourceIPs) == 1 {
			joined++
		}
	}
	return joined
}
