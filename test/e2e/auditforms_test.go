package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/pkg/audit"
)

// auditForms turns a real server's audit log (JSON lines of
// audit.k8s.io/v1 Event, --audit-log-path) into each form a provider
// exports it in, following the shapes of pkg/audit/testdata (README.md
// there lists the provider documents): file name -> content. The events
// are the server's own; only their wrapping changes, and for GKE their
// translation into LogEntry (resourceName without the query, the first
// and last entries of each request marked in operation).
func auditForms(upstream []byte) (map[string][]byte, error) {
	type event struct {
		raw   string
		m     map[string]any
		stage string
		at    time.Time
	}
	var events []event
	for i, l := range bytes.Split(upstream, []byte("\n")) {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			return nil, fmt.Errorf("audit log line %d: %w", i+1, err)
		}
		st, _ := m["stage"].(string)
		ts, _ := m["stageTimestamp"].(string)
		at, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			return nil, fmt.Errorf("audit log line %d: stageTimestamp %q: %w", i+1, ts, err)
		}
		events = append(events, event{raw: string(l), m: m, stage: st, at: at})
	}
	out := map[string][]byte{"upstream.jsonl": upstream, "openshift-node-logs.jsonl": upstream}
	marshal := func(v any) []byte {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			panic(err) // maps of strings and numbers
		}
		return append(b, '\n')
	}

	// EKS: CloudWatch Logs, each message an event.
	const stream = "kube-apiserver-audit-0a1b2c3d4e5f60718293a4b5c6d7e8f9"
	var filtered, got, insights []map[string]any
	var tail bytes.Buffer
	for i, e := range events {
		ms := e.at.UnixMilli()
		filtered = append(filtered, map[string]any{"logStreamName": stream, "timestamp": ms, "message": e.raw, "ingestionTime": ms + 700, "eventId": fmt.Sprintf("3779163258296372345678901234567890123456789012%010d", i)})
		got = append(got, map[string]any{"timestamp": ms, "message": e.raw, "ingestionTime": ms + 700})
		insights = append(insights, map[string]any{"@timestamp": e.at.UTC().Format("2006-01-02 15:04:05.000"), "@message": e.raw})
		fmt.Fprintf(&tail, "%s %s %s\n", e.at.UTC().Format("2006-01-02T15:04:05.000000-07:00"), stream, e.raw)
	}
	out["eks-filter-log-events.json"] = marshal(map[string]any{"events": filtered, "searchedLogStreams": []any{map[string]any{"logStreamName": stream, "searchedCompletely": true}}})
	out["eks-get-log-events.json"] = marshal(map[string]any{"events": got, "nextForwardToken": "f/37791632582963723456789012345678901234567890123456789012", "nextBackwardToken": "b/37791632582963723456789012345678901234567890123456789000"})
	out["eks-logs-tail.txt"] = tail.Bytes()
	out["eks-logs-insights.json"] = marshal(insights)

	// AKS: diagnostic setting records (properties.log the event), and
	// Log Analytics rows (dynamic columns as JSON text, as az prints).
	const rid = "/SUBSCRIPTIONS/00000000-0000-0000-0000-000000000000/RESOURCEGROUPS/RG/PROVIDERS/MICROSOFT.CONTAINERSERVICE/MANAGEDCLUSTERS/AKS1"
	var records, rows []map[string]any
	var storage bytes.Buffer
	text := func(v any) string {
		if v == nil {
			return ""
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	for _, e := range events {
		r := map[string]any{"operationName": "Microsoft.ContainerService/managedClusters/diagnosticLogs/Read", "category": "kube-audit", "resourceId": rid,
			"properties": map[string]any{"log": e.raw, "stream": "stdout", "pod": "kube-apiserver-6f7b8c9d4-x2x9k"}, "time": e.at.UTC().Format(time.RFC3339Nano)}
		records = append(records, r)
		line, _ := json.Marshal(r)
		storage.Write(append(line, '\n'))
		rows = append(rows, map[string]any{"TimeGenerated": e.at.UTC().Format(time.RFC3339Nano), "Level": e.m["level"], "AuditId": e.m["auditID"], "Stage": e.stage,
			"RequestUri": e.m["requestURI"], "Verb": e.m["verb"], "User": text(e.m["user"]), "SourceIps": text(e.m["sourceIPs"]), "UserAgent": e.m["userAgent"],
			"ObjectRef": text(e.m["objectRef"]), "ResponseStatus": text(e.m["responseStatus"]), "RequestReceivedTime": e.m["requestReceivedTimestamp"],
			"StageReceivedTime": e.m["stageTimestamp"], "PodName": "kube-apiserver-6f7b8c9d4-x2x9k", "Type": "AKSAudit", "_ResourceId": strings.ToLower(rid)})
	}
	out["aks-event-hub.json"] = marshal(map[string]any{"records": records})
	out["aks-storage-account.json"] = storage.Bytes()
	out["aks-log-analytics.json"] = marshal(rows)

	// GKE: Cloud Audit Logs LogEntry; gcloud prints newest first, a sink
	// writes them as they come.
	seen := map[string]bool{}
	var entries []map[string]any
	var sink bytes.Buffer
	for _, e := range events {
		entry := gkeEntry(e.m, e.stage, e.at, !seen[fmt.Sprint(e.m["auditID"])])
		seen[fmt.Sprint(e.m["auditID"])] = true
		entries = append(entries, entry)
		line, _ := json.Marshal(entry)
		sink.Write(append(line, '\n'))
	}
	out["gke-log-sink.jsonl"] = sink.Bytes()
	slices.Reverse(entries)
	out["gke-gcloud-logging-read.json"] = marshal(entries)
	return out, nil
}

// gkeEntry is the LogEntry Cloud Audit Logs holds for one stage of an
// audit event: methodName io.k8s.<group>.<version>.<resource>.<verb>,
// resourceName the request path without /api or /apis and without its
// query, operation.id the audit ID.
func gkeEntry(m map[string]any, stage string, at time.Time, first bool) map[string]any {
	str := func(v any) string { s, _ := v.(string); return s }
	ref, _ := m["objectRef"].(map[string]any)
	group := str(ref["apiGroup"])
	if group == "" {
		group = "core"
	}
	path, _, _ := strings.Cut(str(m["requestURI"]), "?")
	name := strings.TrimPrefix(path, "/apis/")
	if strings.HasPrefix(path, "/api/") {
		name = "core/" + strings.TrimPrefix(path, "/api/")
	}
	user, _ := m["user"].(map[string]any)
	var ip string
	if ips, _ := m["sourceIPs"].([]any); len(ips) > 0 {
		ip = str(ips[0])
	}
	method := fmt.Sprintf("io.k8s.%s.%s.%s.%s", group, str(ref["apiVersion"]), str(ref["resource"]), str(m["verb"]))
	op := map[string]any{"id": m["auditID"], "producer": "k8s.io"}
	if first {
		op["first"] = true
	}
	if stage == "ResponseComplete" || stage == "Panic" {
		op["last"] = true
	}
	return map[string]any{
		"protoPayload": map[string]any{
			"@type":              "type.googleapis.com/google.cloud.audit.AuditLog",
			"authenticationInfo": map[string]any{"principalEmail": str(user["username"])},
			"authorizationInfo":  []any{map[string]any{"granted": true, "permission": method, "resource": name}},
			"methodName":         method,
			"requestMetadata":    map[string]any{"callerIp": ip, "callerSuppliedUserAgent": str(m["userAgent"])},
			"resourceName":       name,
			"serviceName":        "k8s.io",
			"status":             map[string]any{},
		},
		"insertId":         fmt.Sprintf("%s-%s", m["auditID"], stage),
		"resource":         map[string]any{"type": "k8s_cluster", "labels": map[string]any{"project_id": "e2e", "location": "europe-west1", "cluster_name": "e2e"}},
		"timestamp":        at.UTC().Format(time.RFC3339Nano),
		"logName":          "projects/e2e/logs/cloudaudit.googleapis.com%2Fdata_access",
		"operation":        op,
		"receiveTimestamp": at.UTC().Format(time.RFC3339Nano),
	}
}

// Every form auditForms writes reads back, through pkg/audit, to the
// server's watch requests in that form's name: the same users, paths,
// addresses and user agents (GKE's without the query). No cluster: a
// log of the shape the e2e server writes.
func TestAuditForms(t *testing.T) {
	log := []byte(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a1","stage":"ResponseStarted","requestURI":"/api/v1/namespaces/team-a/configmaps?resourceVersionMatch=NotOlderThan\u0026sendInitialEvents=true\u0026timeoutSeconds=540\u0026watch=true","verb":"watch","user":{"username":"cm-syncer","groups":["system:authenticated"]},"sourceIPs":["127.0.0.1"],"userAgent":"cm-syncer/v1","objectRef":{"resource":"configmaps","namespace":"team-a","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-11-29T10:22:03.338000Z","stageTimestamp":"2026-11-29T10:22:03.339000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"b2","stage":"ResponseComplete","requestURI":"/apis/apps/v1/deployments?watch=true","verb":"watch","user":{"username":"healthy"},"sourceIPs":["127.0.0.2"],"userAgent":"healthy/v1","objectRef":{"resource":"deployments","apiGroup":"apps","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-11-29T10:22:04Z","stageTimestamp":"2026-11-29T10:27:04Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a1","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/team-a/configmaps?resourceVersionMatch=NotOlderThan\u0026sendInitialEvents=true\u0026timeoutSeconds=540\u0026watch=true","verb":"watch","user":{"username":"cm-syncer","groups":["system:authenticated"]},"sourceIPs":["127.0.0.1"],"userAgent":"cm-syncer/v1","objectRef":{"resource":"configmaps","namespace":"team-a","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-11-29T10:22:03.338000Z","stageTimestamp":"2026-11-29T10:31:03Z"}
`)
	forms, err := auditForms(log)
	if err != nil {
		t.Fatal(err)
	}
	type who struct{ User, Path, IP, UserAgent string }
	want := []who{{"cm-syncer", "/api/v1/namespaces/team-a/configmaps", "127.0.0.1", "cm-syncer/v1"}, {"healthy", "/apis/apps/v1/deployments", "127.0.0.2", "healthy/v1"}}
	formats := map[string]bool{}
	for name, b := range forms {
		t.Run(name, func(t *testing.T) {
			l, err := audit.Read(context.Background(), bytes.NewReader(b), name, audit.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			formats[l.Format] = true
			var got []who
			for _, e := range l.Events {
				got = append(got, who{e.User, e.Path, strings.Join(e.SourceIPs, ","), e.UserAgent})
			}
			if diff := cmp.Diff(want, got); diff != "" || l.SkippedCount != 0 {
				t.Errorf("%s (%s): %d skipped, watches (-want +got):\n%s", name, l.Format, l.SkippedCount, diff)
			}
		})
	}
	if len(formats) != len(audit.Formats()) {
		t.Errorf("the forms written read as %d formats, want all %d read: %v", len(formats), len(audit.Formats()), formats)
	}
}
