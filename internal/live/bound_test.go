package live

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestGoroutineDumpIsBoundedNearTheRuntimeCut: an endless debug=2 stream
// is refused past 64 MiB, the runtime's own cut, with an error naming the
// server; collect's file of it is not left on disk.
func TestGoroutineDumpIsBoundedNearTheRuntimeCut(t *testing.T) {
	t.Parallel()
	h := &fakeapiserver.Hostility{Kind: fakeapiserver.Endless}
	s := hostileServer(t, "/debug/pprof/goroutine?debug=2", h)
	dir := t.TempDir()
	res, err := Run(context.Background(), hostileConfig(t, s), &bundle.Dir{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	fi := fetchOf(t, res, api.FileGoroutineDebug2)
	want := s.Address() + ": GET /debug/pprof/goroutine: the answer is larger than 64 MiB after decompression"
	if !strings.Contains(fi.Error, want) || fi.Bytes > model.MaxDumpBytes {
		t.Errorf("debug=2 fetch: error %q, %d bytes read; want %q within %d bytes", fi.Error, fi.Bytes, want, model.MaxDumpBytes)
	}
	if h.Sent() > model.MaxDumpBytes+fakeapiserver.FlowSlack {
		t.Errorf("the server wrote %d bytes, want at most %d", h.Sent(), model.MaxDumpBytes+fakeapiserver.FlowSlack)
	}
	p := filepath.Join(dir, bundle.SampleDir(s.Address(), 1), bundle.FileName(api.FileGoroutineDebug2))
	if st, err := os.Stat(p); err == nil {
		t.Errorf("collect left %d bytes of the refused dump in %s", st.Size(), p)
	}
}
