package fakeapiserver

import (
	"bytes"
	"os"
	"strings"
	"sync"
)

// unreadFamilies are the /metrics families of a real kube-apiserver that
// watch-doctor never reads: no catalog entry (pkg/metrics/catalog.go), no
// version evidence (pkg/metrics/detect.go), no watch, APF seat, pause or
// process figure, no replay derivation (internal/replay/derive.go). In the
// v1.37.2 seed-repro capture they are 1.32 of its 2.32 MB, mostly
// histogram buckets per resource and verb; parsing /metrics was about a
// third of internal/cli's test CPU under -race (the part pprof could
// attribute). The server serves captures
// without them unless FullMetrics is set; analyze of the same captures
// from testdata, and the goldens, read the files whole.
var unreadFamilies = []string{
	"etcd_request_duration_seconds",
	"apiserver_request_duration_seconds",
	"apiserver_request_sli_duration_seconds",
	"apiserver_request_body_size_bytes",
	"apiserver_request_filter_duration_seconds",
	"apiserver_response_sizes",
	"apiserver_admission_",
	"apiserver_flowcontrol_priority_level_request_utilization",
	"apiserver_flowcontrol_priority_level_seat_utilization",
	"apiserver_flowcontrol_demand_seats",
	"apiserver_flowcontrol_read_vs_write_current_requests",
	"apiserver_flowcontrol_request_execution_seconds",
	"informer_",
	"workqueue_",
	"rest_client_",
	"kubernetes_feature_enabled",
}

// unread reports whether the exposition line belongs to a family of
// unreadFamilies: a sample line by its name, a # HELP or # TYPE line by
// the family it names.
func unread(line string) bool {
	name := line
	if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
		name = rest
	} else if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
		name = rest
	}
	for _, f := range unreadFamilies {
		if strings.HasPrefix(name, f) {
			return true
		}
	}
	return false
}

// trimmedMetrics caches each capture's metrics.txt without its unread
// families, by path, size and modification time (a test may write a
// capture's file again).
var trimmedMetrics sync.Map

type trimKey struct {
	path  string
	size  int64
	mtime int64
}

// readMetrics is the capture file at path, whole when full, else without
// the families watch-doctor never reads (trimmed once per version of the
// file and process).
func readMetrics(path string, full bool) ([]byte, error) {
	if full {
		return os.ReadFile(path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	key := trimKey{path, fi.Size(), fi.ModTime().UnixNano()}
	if b, ok := trimmedMetrics.Load(key); ok {
		return b.([]byte), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.Grow(len(b))
	for line := range strings.Lines(string(b)) {
		if !unread(line) {
			out.WriteString(line)
		}
	}
	trimmed := out.Bytes()
	trimmedMetrics.Store(key, trimmed)
	return trimmed, nil
}
