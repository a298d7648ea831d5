package fakeapiserver

import (
	"net/http"
	"testing"
)

// Debug2Path is the request of a debug=2 goroutine dump: the one fetch
// that stops the world in the server while it is written.
const Debug2Path = "/debug/pprof/goroutine?debug=2"

// ForbidDumps makes every debug=2 goroutine dump request fail t: for
// tests of runs whose evidence must not stop the world (an execution
// trace chosen, serve, a dump over the pause budget). The request is
// still answered 404, so the run goes on as it would.
func (s *Server) ForbidDumps(t testing.TB) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forbidDumps = t
}

// harmful reports whether r is a forbidden dump request, failing the
// test that forbade it, and answers it.
func (s *Server) harmful(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	t := s.forbidDumps
	s.mu.Unlock()
	if t == nil || !isDebug2(r) {
		return false
	}
	t.Errorf("%s: the client requested a debug=2 goroutine dump (%s) that this run's evidence does not allow", s.Address(), r.URL.RequestURI())
	status(w, http.StatusNotFound, "forbidden by the test: no debug=2 dump in this run")
	return true
}

// isDebug2 reports whether r asks for a debug=2 goroutine dump, under
// any path prefix.
func isDebug2(r *http.Request) bool {
	p := r.URL.Path
	const g = "/debug/pprof/goroutine"
	return len(p) >= len(g) && p[len(p)-len(g):] == g && r.URL.Query().Get("debug") == "2"
}
