package fakeapiserver

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// recorder is a testing.TB that records Errorf instead of failing.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestForbidDumpsFailsTheTestOnADump: with ForbidDumps, a debug=2
// request, under a path prefix too, fails the test and is answered 404;
// the other profiles and the trace are served as before.
func TestForbidDumpsFailsTheTestOnADump(t *testing.T) {
	s := Start(t, golden.Fixture("t2"))
	s.Trace = true
	rec := &recorder{TB: t}
	s.ForbidDumps(rec)
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/debug/pprof/goroutine?debug=1", http.StatusOK},
		{"/debug/pprof/goroutine?debug=2", http.StatusNotFound},
		{"/k8s/clusters/c/debug/pprof/goroutine?debug=2", http.StatusNotFound},
		{"/debug/pprof/goroutine", http.StatusOK},
	} {
		if got := hostileGet(t, s, tc.path).StatusCode; got != tc.status {
			t.Errorf("GET %s: %d, want %d", tc.path, got, tc.status)
		}
	}
	want := []string{
		s.Address() + ": the client requested a debug=2 goroutine dump (/debug/pprof/goroutine?debug=2) that this run's evidence does not allow",
		s.Address() + ": the client requested a debug=2 goroutine dump (/k8s/clusters/c/debug/pprof/goroutine?debug=2) that this run's evidence does not allow",
	}
	if diff := cmp.Diff(want, rec.errs); diff != "" {
		t.Errorf("test failures (-want +got):\n%s", diff)
	}
}
