// Package fakeapiserver serves the real captures of testdata over HTTPS the
// way kube-apiserver serves its debug endpoints, for unit tests of live
// reading: discovery through EndpointSlices, bearer-token users with or
// without the debug rules, and one capture per sample. It is a test double:
// the real API server is exercised in test/e2e.
package fakeapiserver

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"
)

// Tokens the fake servers accept.
const (
	// TokenAdmin may read everything.
	TokenAdmin = "admin-token"
	// TokenNoDebug is authenticated but has no debug rules.
	TokenNoDebug = "no-debug-token"
)

// Server is one fake API server instance.
type Server struct {
	*httptest.Server
	// Captures are the capture directories served, one per sample: the
	// n-th /metrics request (the first fetch of a sample) switches to
	// Captures[n] (the last one stays).
	Captures []string
	// ProcessStart, when set, replaces process_start_time_seconds in
	// /metrics for each sample in turn, to simulate restarts or a load
	// balancer switching servers.
	ProcessStart []float64
	// Endpoints are listed by the EndpointSlices of default/kubernetes.
	Endpoints []string
	// Leases are listed as the API server identity Leases of kube-system
	// (leases.go); none by default.
	Leases []Lease
	// NoProfiling makes /debug/pprof answer 404 (--profiling=false).
	NoProfiling bool
	// ForbidProfiling makes /debug/pprof answer 403 to every user, as
	// RBAC without the /debug/pprof/* rule does.
	ForbidProfiling bool
	// Fail makes every request but discovery answer 500.
	Fail bool
	// Block makes the goroutine dump requests (debug=2, and debug=1 and
	// protobuf with BlockProfiles) wait until the client gives up.
	Block bool
	// BlockProfiles: Block also holds the debug=1 and protobuf profiles.
	BlockProfiles bool
	// BlockAll makes every request but discovery wait until the client
	// gives up: a server that accepts connections and never answers.
	BlockAll bool
	// BlockDiscovery makes the EndpointSlices list wait until the client
	// gives up.
	BlockDiscovery bool
	// Started, when set, receives the path of each request as it arrives
	// (tests wait on it instead of sleeping).
	Started chan string
	// FailMetrics makes /metrics answer 500.
	FailMetrics bool
	// FullMetrics serves each capture's metrics.txt whole; without it the
	// families watch-doctor never reads are left out (trim.go).
	FullMetrics bool
	// Hostile answers requests as a broken or hostile server would, by
	// path with its query ("/debug/pprof/goroutine?debug=2") or by path
	// ("/metrics", DiscoveryPath); see hostile.go.
	Hostile map[string]*Hostility
	// PathPrefix is a path the server lives under, as behind a proxy
	// (https://host/k8s/clusters/c-abc).
	PathPrefix string
	// Trace serves /debug/pprof/trace with net/http/pprof's own handler:
	// a real execution trace of the test process (one at a time, as the
	// runtime allows). Without it the path answers 404.
	Trace bool
	// TraceBody, when set, is served as /debug/pprof/trace instead, at
	// once: as a replayed or hostile answer arrives.
	TraceBody []byte
	// TraceClock, when set, is stepped by the seconds= a trace request
	// asks for before it is answered (TraceBody, or a Hostile answer):
	// the canned trace then takes as long as asked on the run's fake
	// clock, as a live one does.
	TraceClock *testingclock.FakeClock
	// Pods are listed by PodsPath, by their status.podIP (pods.go).
	Pods []corev1.Pod
	// ForbidPods makes PodsPath answer 403.
	ForbidPods bool
	// IgnorePodSelector makes PodsPath list every pod, as a server that
	// does not apply the status.podIP field selector would.
	IgnorePodSelector bool

	mu          sync.Mutex
	forbidDumps testing.TB
	requests    []string
	sample      int
	metrics     int
}

// Start starts a TLS server serving captures (directories of the fixture
// layout). It is closed when the test ends.
func Start(t testing.TB, captures ...string) *Server {
	t.Helper()
	s := &Server{Captures: captures}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.EnableHTTP2 = true
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// Address is host:port of the server.
func (s *Server) Address() string { return strings.TrimPrefix(s.URL, "https://") }

// Requests lists the paths requested so far, with their query.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// serve answers one request: the checks of admit first, then the path's
// file from the current capture.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	path, ok := s.admit(w, r)
	if !ok {
		return
	}
	switch {
	case path == "/debug/pprof/goroutine":
		s.serveGoroutines(w, r)
	case path == "/debug/pprof/trace" && s.TraceBody != nil:
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(s.TraceBody)
	case path == "/debug/pprof/trace" && s.Trace:
		pprof.Trace(w, r)
	case path == "/metrics" && s.FailMetrics:
		s.mu.Lock()
		s.sample++
		s.mu.Unlock()
		status(w, http.StatusInternalServerError, "metrics unavailable")
	case path == "/metrics":
		s.serveMetrics(w)
	case path == "/debug/api_priority_and_fairness/dump_requests":
		s.file(w, s.current(), "apf-requests.txt", "text/plain")
	case path == "/debug/api_priority_and_fairness/dump_priority_levels":
		s.file(w, s.current(), "apf-priority-levels.txt", "text/plain")
	case path == "/version":
		s.file(w, s.current(), "version.json", "application/json")
	case path == PodsPath:
		s.servePods(w, r)
	default:
		status(w, http.StatusNotFound, "the server could not find the requested resource")
	}
}

// traceTakes steps TraceClock by the window a trace request asks for.
func (s *Server) traceTakes(r *http.Request) {
	if s.TraceClock == nil || !strings.HasSuffix(r.URL.Path, "/debug/pprof/trace") {
		return
	}
	if secs, err := strconv.ParseFloat(r.URL.Query().Get("seconds"), 64); err == nil && secs > 0 {
		s.TraceClock.Step(time.Duration(secs * float64(time.Second)))
	}
}

// admit records the request and answers it when it goes no further than
// the checks: the token, a hostile answer, the path prefix, discovery,
// Fail, RBAC and BlockAll. Otherwise it returns the path, prefix removed,
// and true.
func (s *Server) admit(w http.ResponseWriter, r *http.Request) (string, bool) {
	s.mu.Lock()
	s.requests = append(s.requests, r.URL.RequestURI())
	s.mu.Unlock()
	if s.Started != nil {
		select {
		case s.Started <- r.URL.RequestURI():
		case <-r.Context().Done():
			return "", false
		}
	}
	if s.harmful(w, r) {
		return "", false
	}
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if token != TokenAdmin && token != TokenNoDebug {
		status(w, http.StatusUnauthorized, "Unauthorized")
		return "", false
	}
	s.traceTakes(r)
	if h := s.hostile(r); h != nil {
		h.serve(w, r)
		return "", false
	}
	path := r.URL.Path
	if s.PathPrefix != "" {
		if !strings.HasPrefix(path, s.PathPrefix+"/") {
			status(w, http.StatusNotFound, "not under "+s.PathPrefix)
			return "", false
		}
		path = strings.TrimPrefix(path, s.PathPrefix)
	}
	if path == DiscoveryPath {
		if s.BlockDiscovery {
			<-r.Context().Done()
			return "", false
		}
		if token != TokenAdmin {
			status(w, http.StatusForbidden, `endpointslices.discovery.k8s.io is forbidden: User "no-debug" cannot list resource "endpointslices" in API group "discovery.k8s.io" in the namespace "default"`)
			return "", false
		}
		s.endpointSlices(w)
		return "", false
	}
	if path == LeasesPath {
		s.leases(w, token)
		return "", false
	}
	if s.Fail {
		status(w, http.StatusInternalServerError, "internal error")
		return "", false
	}
	if s.ForbidProfiling && strings.HasPrefix(path, "/debug/pprof/") {
		status(w, http.StatusForbidden, fmt.Sprintf(`forbidden: User "watch-doctor" cannot get path %q`, path))
		return "", false
	}
	if token != TokenAdmin && path != "/version" {
		status(w, http.StatusForbidden, fmt.Sprintf(`forbidden: User "no-debug" cannot get path %q`, path))
		return "", false
	}
	if s.BlockAll {
		<-r.Context().Done()
		return "", false
	}
	return path, true
}

// serveGoroutines answers /debug/pprof/goroutine: the dump of the
// ?debug= asked for, unless NoProfiling or Block say otherwise.
func (s *Server) serveGoroutines(w http.ResponseWriter, r *http.Request) {
	if s.NoProfiling {
		http.NotFound(w, r)
		return
	}
	debug := r.URL.Query().Get("debug")
	if s.Block && (debug == "2" || s.BlockProfiles) {
		<-r.Context().Done()
		return
	}
	switch debug {
	case "2":
		s.file(w, s.current(), "goroutine-debug2.txt", "text/plain; charset=utf-8")
	case "1":
		s.file(w, s.current(), "goroutine-debug1.txt", "text/plain; charset=utf-8")
	default:
		s.file(w, s.current(), "goroutine.pb.gz", "application/octet-stream")
	}
}

// serveMetrics answers /metrics from the next sample's capture, with its
// process_start_time_seconds from ProcessStart when set.
func (s *Server) serveMetrics(w http.ResponseWriter) {
	s.mu.Lock()
	dir := s.capture(s.sample)
	n := s.metrics
	s.metrics++
	s.sample++
	s.mu.Unlock()
	b, err := readMetrics(filepath.Join(dir, "metrics.txt"), s.FullMetrics)
	if err != nil {
		status(w, http.StatusInternalServerError, err.Error())
		return
	}
	if len(s.ProcessStart) > 0 {
		v := s.ProcessStart[min(n, len(s.ProcessStart)-1)]
		b = replaceMetric(b, "process_start_time_seconds", strconv.FormatFloat(v, 'e', -1, 64))
	}
	setDate(w, dir)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	w.Write(b)
}

func (s *Server) capture(i int) string { return s.Captures[min(i, len(s.Captures)-1)] }

// current is the capture of the sample whose /metrics was served last.
func (s *Server) current() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.capture(max(s.sample-1, 0))
}

func (s *Server) file(w http.ResponseWriter, dir, name, contentType string) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		status(w, http.StatusInternalServerError, err.Error())
		return
	}
	setDate(w, dir)
	w.Header().Set("Content-Type", contentType)
	w.Write(b)
}

// setDate answers with the capture's own time, as the real server's clock
// said when it was taken.
func setDate(w http.ResponseWriter, dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "captured-at.txt"))
	if err != nil {
		return
	}
	if t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(b))); err == nil {
		w.Header().Set("Date", t.UTC().Format(http.TimeFormat))
	}
}

func (s *Server) endpointSlices(w http.ResponseWriter) {
	type port struct {
		Name string `json:"name"`
		Port int    `json:"port"`
	}
	var items []map[string]any
	for _, ep := range s.Endpoints {
		host, p, _ := net.SplitHostPort(ep)
		n, _ := strconv.Atoi(p)
		items = append(items, map[string]any{
			"metadata":    map[string]any{"name": "kubernetes-" + strconv.Itoa(len(items)), "namespace": "default", "labels": map[string]string{"kubernetes.io/service-name": "kubernetes"}},
			"addressType": "IPv4",
			"endpoints":   []map[string]any{{"addresses": []string{host}, "conditions": map[string]bool{"ready": true}}},
			"ports":       []port{{Name: "https", Port: n}},
		})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"kind": "EndpointSliceList", "apiVersion": "discovery.k8s.io/v1", "metadata": map[string]any{}, "items": items})
}

func status(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": msg, "code": code})
}

// replaceMetric sets the value of an unlabelled sample line.
func replaceMetric(b []byte, name, value string) []byte {
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, name+" ") {
			lines[i] = name + " " + value
		}
	}
	return []byte(strings.Join(lines, "\n"))
}

// CopyCapture copies the capture directory src with its capture time (the
// fake server's Date header) set to capturedAt (RFC 3339), and returns the
// copy's directory.
func CopyCapture(t testing.TB, src, capturedAt string) string {
	t.Helper()
	return EditCapture(t, src, func(name string, b []byte) []byte {
		if name == "captured-at.txt" {
			return []byte(capturedAt + "\n")
		}
		return b
	})
}

// EditCapture copies the capture directory src into a directory of the
// test's, each file's bytes through edit (given the file's name), and
// returns the copy's directory.
func EditCapture(t testing.TB, src string, edit func(name string, b []byte) []byte) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), edit(e.Name(), b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// NoWaitClock is a fake clock whose After fails the test: for runs that
// must not wait out --interval (every instance failed its first sample).
type NoWaitClock struct {
	*testingclock.FakeClock
	T testing.TB
}

// After reports the wait as a test failure and returns at once.
func (c NoWaitClock) After(d time.Duration) <-chan time.Time {
	c.T.Errorf("waited %s for the next sample although every instance failed its first", d)
	ch := make(chan time.Time, 1)
	ch <- c.Now()
	return ch
}
