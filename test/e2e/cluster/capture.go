package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
)

// CaptureFiles are the files of one capture in the layout of the shared
// fixtures and testdata/kube-apiserver-*/ (which `analyze` reads), with the
// API server path and query each is fetched from; captured-at.txt is
// written besides.
var CaptureFiles = []struct {
	Name, Path string
	Params     [][2]string
}{
	{"goroutine-debug2.txt", "/debug/pprof/goroutine", [][2]string{{"debug", "2"}}},
	{"goroutine-debug1.txt", "/debug/pprof/goroutine", [][2]string{{"debug", "1"}}},
	{"goroutine.pb.gz", "/debug/pprof/goroutine", nil},
	{"apf-requests.txt", "/debug/api_priority_and_fairness/dump_requests", [][2]string{{"includeRequestDetails", "1"}}},
	{"apf-priority-levels.txt", "/debug/api_priority_and_fairness/dump_priority_levels", nil},
	{"metrics.txt", "/metrics", nil},
	{"version.json", "/version", nil},
}

// CaptureBundle fetches CaptureFiles through rc (an admin's client) into
// dir, which it creates, and writes the capture time, taken before the
// first fetch, RFC 3339 UTC, to captured-at.txt.
func CaptureBundle(ctx context.Context, rc rest.Interface, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	at := time.Now().UTC().Format(time.RFC3339)
	for _, f := range CaptureFiles {
		req := rc.Get().AbsPath(f.Path)
		for _, p := range f.Params {
			req = req.Param(p[0], p[1])
		}
		b, err := req.DoRaw(ctx)
		if err != nil {
			return fmt.Errorf("GET %s: %w", f.Path, err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name), b, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "captured-at.txt"), []byte(at+"\n"), 0o644)
}
