package audit

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Every fixture of testdata (one per form, README.md lists the documents
// each was written from) reads to the same two watch requests, the stuck
// one's stages merged, in its own form's name.
func TestFixtures(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	uri1 := "/api/v1/namespaces/team-a/configmaps?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeoutSeconds=540&watch=true"
	uri2 := "/apis/apps/v1/deployments?allowWatchBookmarks=true&resourceVersion=1200&timeoutSeconds=312&watch=true"
	stuck := Event{
		AuditID: "7e1c1c52-1d5b-4d8e-9f1e-3c1a2b4d5e60", User: "system:serviceaccount:team-a:cm-syncer", Verb: "watch",
		RequestURI: uri1, Path: "/api/v1/namespaces/team-a/configmaps", SourceIPs: []string{"10.244.1.7"},
		UserAgent: "cm-syncer/v1.2.0 (linux/amd64) kubernetes/abcdef", RequestReceived: at("2026-11-29T10:22:03.338Z"),
		Completed: at("2026-11-29T10:31:03.3405Z"), TimeoutSeconds: 540, Code: 200,
	}
	open := Event{
		AuditID: "5a7d9e2c-3b4f-4a6e-8c1d-9e0f1a2b3c4d", User: "system:serviceaccount:kube-system:deployment-controller", Verb: "watch",
		RequestURI: uri2, Path: "/apis/apps/v1/deployments", SourceIPs: []string{"10.0.0.12"},
		UserAgent:       "kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/1b2c3d4/system:serviceaccount:kube-system:deployment-controller",
		RequestReceived: at("2026-11-29T10:22:05.1Z"), TimeoutSeconds: 312,
	}
	// GKE's resourceName has no query and its entries no
	// requestReceivedTimestamp: the first entry's timestamp stands for it.
	gke := func(e Event, first string) Event {
		e.RequestURI, e.TimeoutSeconds, e.Code = e.Path, 0, 0
		e.RequestReceived = at(first)
		return e
	}
	tests := []struct {
		file, format string
		want         []Event
		lacks        bool
	}{
		{"upstream.jsonl", formatUpstream, []Event{stuck, open}, false},
		{"openshift-node-logs.jsonl", formatUpstream, []Event{stuck, open}, false},
		{"eks-filter-log-events.json", formatCloudWatch, []Event{stuck, open}, false},
		{"eks-get-log-events.json", formatCloudWatch, []Event{stuck, open}, false},
		{"eks-logs-tail.txt", formatTail, []Event{stuck, open}, false},
		{"eks-logs-insights.json", formatCloudWatch, []Event{stuck, open}, false},
		{"aks-event-hub.json", formatAKSRecords, []Event{stuck, open}, false},
		{"aks-storage-account.json", formatAKSRecords, []Event{stuck, open}, false},
		{"aks-log-analytics.json", formatAKSRows, []Event{stuck, open}, false},
		{"gke-gcloud-logging-read.json", formatGKEArray, []Event{gke(stuck, "2026-11-29T10:22:03.33912Z"), gke(open, "2026-11-29T10:22:05.101Z")}, true},
		{"gke-log-sink.jsonl", formatGKELines, []Event{gke(stuck, "2026-11-29T10:22:03.33912Z"), gke(open, "2026-11-29T10:22:05.101Z")}, true},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := Read(context.Background(), f, tc.file, DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			if got.Format != tc.format {
				t.Errorf("format %q, want %q", got.Format, tc.format)
			}
			if got.SkippedCount != 0 || got.Others != 1 || got.Watches != 2 {
				t.Errorf("%d skipped %v, %d others, %d watches: want 0, 1, 2", got.SkippedCount, got.Skipped, got.Others, got.Watches)
			}
			if (len(got.Lacks) > 0) != tc.lacks {
				t.Errorf("lacks %q", got.Lacks)
			}
			for i := range got.Events {
				got.Events[i].Source, got.Events[i].Line = "", 0
			}
			if diff := cmp.Diff(tc.want, got.Events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}
