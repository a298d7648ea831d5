package audit

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/bounded"
)

// line is an audit.k8s.io/v1 Event as kube-apiserver's JSON log backend
// writes it (field order and all), at stage and verb.
func line(id, stage, verb, user, uri, ip, ua string) string {
	return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"` + id + `","stage":"` + stage + `","requestURI":"` + uri +
		`","verb":"` + verb + `","user":{"username":"` + user + `","groups":["system:authenticated"]},"sourceIPs":["` + ip + `"],"userAgent":"` + ua +
		`","objectRef":{"resource":"pods","namespace":"rand2","apiVersion":"v1"},"requestReceivedTimestamp":"2026-11-29T10:22:03.338000Z","stageTimestamp":"2026-11-29T10:22:03.339000Z"}` + "\n"
}

func TestRead(t *testing.T) {
	uri := "/api/v1/namespaces/rand2/pods?allowWatchBookmarks=true&resourceVersion=0&sendInitialEvents=true&watch=true"
	log := line("a1", "RequestReceived", "watch", "slow-informer", uri, "127.0.0.2", "slow/v0.37.2") +
		line("a1", "ResponseStarted", "watch", "slow-informer", uri, "127.0.0.2", "slow/v0.37.2") +
		line("b2", "ResponseComplete", "get", "admin", "/version", "127.0.0.1", "kubectl") +
		"\n" +
		"not json\n" +
		`{"kind":"Policy","apiVersion":"audit.k8s.io/v1"}` + "\n" +
		line("c3", "ResponseStarted", "watch", "healthy", uri, "127.0.0.3", "healthy/v0.37.2")
	want := &Log{
		Events: []Event{
			{Source: "audit.log", Line: 1, AuditID: "a1", User: "slow-informer", Verb: "watch", RequestURI: uri, Path: "/api/v1/namespaces/rand2/pods", SourceIPs: []string{"127.0.0.2"}, UserAgent: "slow/v0.37.2", RequestReceived: time.Date(2026, 11, 29, 10, 22, 3, 338000000, time.UTC)},
			{Source: "audit.log", Line: 7, AuditID: "c3", User: "healthy", Verb: "watch", RequestURI: uri, Path: "/api/v1/namespaces/rand2/pods", SourceIPs: []string{"127.0.0.3"}, UserAgent: "healthy/v0.37.2", RequestReceived: time.Date(2026, 11, 29, 10, 22, 3, 338000000, time.UTC)},
		},
		Summary: Summary{
			Name: "audit.log", Format: formatUpstream,
			SkippedCount: 2,
			Skipped: []Skipped{
				{Line: 5, Reason: "not a JSON object"},
				{Line: 6, Reason: `kind "Policy", apiVersion "audit.k8s.io/v1": not an audit.k8s.io/v1 Event`},
			},
			Lines: 7, Records: 6, Others: 1, Watches: 2,
		},
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(log))
	zw.Close()
	for name, in := range map[string][]byte{"plain": []byte(log), "gzipped": gz.Bytes()} {
		t.Run(name, func(t *testing.T) {
			got, err := Read(context.Background(), bytes.NewReader(in), "audit.log", DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
		})
	}
}

// Bounds: a log over its size is an error naming it (counted after
// decompression), a line over its length is skipped and listed, more
// watches than the bound is an error naming the line.
func TestReadLimits(t *testing.T) {
	uri := "/api/v1/pods?watch=true"
	one := line("a", "ResponseStarted", "watch", "u", uri, "10.0.0.1", "ua")
	tests := []struct {
		name    string
		in      string
		limits  Limits
		wantErr string
		skipped []Skipped
	}{
		{"too large", strings.Repeat(one, 10), Limits{Bytes: int64(len(one) * 5), Line: 4096, Watches: 100}, "audit.log holds more than", nil},
		{"long line skipped", `{"kind":"Event"` + strings.Repeat(" ", 5000) + "}\n" + one, Limits{Bytes: 1 << 20, Line: 4096, Watches: 100}, "", []Skipped{{Line: 1, Reason: "longer than 4096 bytes"}}},
		{"too many watches", line("a", "", "watch", "u", uri, "", "") + line("b", "", "watch", "u", uri, "", ""), Limits{Bytes: 1 << 20, Line: 4096, Watches: 1}, "audit.log: line 2: more watch requests than the bound (1)", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Read(context.Background(), strings.NewReader(tc.in), "audit.log", tc.limits)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.skipped, got.Skipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
		})
	}
	var tl *bounded.TooLargeError
	_, err := Read(context.Background(), strings.NewReader(strings.Repeat(one, 10)), "audit.log", Limits{Bytes: 100, Line: 4096, Watches: 10})
	if !errors.As(err, &tl) {
		t.Errorf("err %v, want a *bounded.TooLargeError", err)
	}
}
