package dumpgen_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/diagnosis"
	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

func repo(t *testing.T) *dumpgen.Set {
	t.Helper()
	s, err := dumpgen.Repo()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestWrite checks the shape of generated dumps: the goroutine count,
// unique ids, parents renumbered with their children, and the planted
// watches at their ids with their wait.
func TestWrite(t *testing.T) {
	s := repo(t)
	for _, cfg := range []dumpgen.Config{
		{Goroutines: 4, Stuck: 1},
		{Goroutines: 2000, Stuck: 0},
		{Goroutines: 9000, Stuck: 3, WaitMinutes: 9},
	} {
		t.Run(fmt.Sprintf("%d-%d", cfg.Goroutines, cfg.Stuck), func(t *testing.T) {
			data, res, err := s.Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Bytes != int64(len(data)) || res.Goroutines != cfg.Goroutines || len(res.Planted) != cfg.Stuck {
				t.Fatalf("result %d bytes, %d goroutines, %d planted; wrote %d bytes for %+v", res.Bytes, res.Goroutines, len(res.Planted), len(data), cfg)
			}
			gs, stats, err := stacks.ParseDebug2(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if len(gs) != cfg.Goroutines || stats.SkippedLines != 0 {
				t.Fatalf("parsed %d goroutines, %d skipped lines; want %d and none", len(gs), stats.SkippedLines, cfg.Goroutines)
			}
			byID := map[int64]*stacks.Goroutine{}
			for _, g := range gs {
				if byID[g.ID] != nil {
					t.Fatalf("goroutine id %d appears twice", g.ID)
				}
				byID[g.ID] = g
			}
			wantWait := cfg.WaitMinutes
			if wantWait == 0 {
				wantWait = 5
			}
			for _, p := range res.Planted {
				for _, c := range []struct {
					id, parent int64
					top        string
					wait       int
				}{
					{p.ConnID, -1, "golang.org/x/net/http2.(*serverConn).serve", 0},
					{p.HandlerID, p.ConnID, "golang.org/x/net/http2.(*serverConn).writeDataFromHandler", wantWait},
					{p.APFID, p.HandlerID, "k8s.io/apiserver/pkg/util/flowcontrol.(*initializationSignal).Wait", wantWait},
					{p.WatcherID, p.HandlerID, "k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).sendWatchCacheEvent", wantWait},
				} {
					g := byID[c.id]
					if g == nil {
						t.Fatalf("planted goroutine %d missing", c.id)
					}
					if got := stacks.TopFunc(g.Frames); got != c.top || g.WaitMinutes != c.wait || (c.parent >= 0 && g.ParentID != c.parent) {
						t.Errorf("goroutine %d: top %s, wait %d, parent %d; want %s, %d, %d", c.id, got, g.WaitMinutes, g.ParentID, c.top, c.wait, c.parent)
					}
				}
			}
		})
	}
}

// TestCopiesKeepLinks checks that each copy of a template links to its
// own goroutines: a parent present in the template is present, renumbered
// the same way, in every full copy.
func TestCopiesKeepLinks(t *testing.T) {
	s := repo(t)
	data, _, err := s.Generate(dumpgen.Config{Goroutines: 12_000})
	if err != nil {
		t.Fatal(err)
	}
	gs, _, err := stacks.ParseDebug2(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[int64]bool{}
	for _, g := range gs {
		ids[g.ID] = true
	}
	// Copy k adds k*stride to every id; stride is a power of ten above the
	// templates' ids (72616 in the seed-repro captures).
	const stride = 100_000
	linked := map[int64]int{} // copy -> children whose parent is in the dump
	for _, g := range gs {
		if g.ParentID == 0 {
			continue
		}
		if g.ID/stride != g.ParentID/stride {
			t.Fatalf("goroutine %d names parent %d of another copy", g.ID, g.ParentID)
		}
		if ids[g.ParentID] {
			linked[g.ID/stride]++
		}
	}
	// Full copies (all but the last) alternate between t1 and t2: same
	// template, same number of linked children.
	for k := int64(2); k+1 < int64(len(linked)); k++ {
		if linked[k] != linked[k-2] || linked[k] == 0 {
			t.Fatalf("copy %d has %d children linked to a parent, copy %d has %d", k, linked[k], k-2, linked[k-2])
		}
	}
}

// TestPlantedFoundExactly runs the analysis pipeline over a generated dump
// streamed through a pipe and expects exactly the planted stuck watches.
func TestPlantedFoundExactly(t *testing.T) {
	for _, oneConn := range []bool{false, true} {
		t.Run(fmt.Sprintf("one connection %v", oneConn), func(t *testing.T) {
			plantedFoundExactly(t, dumpgen.Config{Goroutines: 10_000, Stuck: 5, WaitMinutes: 3, OneConnection: oneConn})
		})
	}
}

// plantedFoundExactly: the diagnosis of a dump made to cfg finds exactly
// its planted watches, each linked to its handler, APF goroutine and
// connection (the first planted watch's with cfg.OneConnection, every
// handler then counting cfg.Stuck watches on it).
func plantedFoundExactly(t *testing.T, cfg dumpgen.Config) {
	t.Helper()
	s := repo(t)
	pr, pw := io.Pipe()
	var res dumpgen.Result
	done := make(chan error, 1)
	go func() {
		var err error
		res, err = s.Write(pw, cfg)
		pw.CloseWithError(err)
		done <- err
	}()
	d, err := bundle.ReadDebug2(pr)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r := diagnosis.Diagnose([]watches.Server{{Name: "gen", Samples: []watches.Sample{{Source: "gen", Dump: d}}}}, diagnosis.Options{})
	type trio struct {
		Watcher, Handler, APF, Conn int64
		ConnWatches                 int
	}
	var got, want []trio
	for _, p := range res.Planted {
		tr := trio{p.WatcherID, p.HandlerID, p.APFID, p.ConnID, 1}
		if cfg.OneConnection {
			tr.Conn, tr.ConnWatches = res.Planted[0].ConnID, cfg.Stuck
		}
		want = append(want, tr)
	}
	for _, f := range r.Findings {
		if f.Type != api.StuckInitialEvents {
			t.Errorf("unexpected %s finding for goroutine %d", f.Type, f.Watcher.GoroutineID)
			continue
		}
		tr := trio{Watcher: f.Watcher.GoroutineID, APF: f.Watcher.APFGoroutineID}
		if h := f.Watcher.Handler; h != nil {
			tr.Handler, tr.Conn, tr.ConnWatches = h.GoroutineID, h.ConnGoroutineID, h.ConnWatches
		}
		got = append(got, tr)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stuck watches (-planted +found):\n%s", diff)
	}
	if r.Summary.Goroutines != cfg.Goroutines {
		t.Errorf("report counts %d goroutines, want %d", r.Summary.Goroutines, cfg.Goroutines)
	}
}

// TestWriteStreams checks that Write holds none of its output: writing
// 100k goroutines (about 95 MB) allocates a small fraction of that.
func TestWriteStreams(t *testing.T) {
	s := repo(t)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := s.Write(io.Discard, dumpgen.Config{Goroutines: 100_000, Stuck: 2})
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("writing %d bytes allocated %d bytes: the output is being held", res.Bytes, alloc)
	}
}

// TestEnsureFile checks that a dump is reused only when its config and
// generator match.
func TestEnsureFile(t *testing.T) {
	s := repo(t)
	path := filepath.Join(t.TempDir(), "d.txt")
	cfg := dumpgen.Config{Goroutines: 3000, Stuck: 1}
	res1, reused, err := s.EnsureFile(path, cfg)
	if err != nil || reused {
		t.Fatalf("first EnsureFile: reused %v, %v", reused, err)
	}
	res2, reused, err := s.EnsureFile(path, cfg)
	if err != nil || !reused {
		t.Fatalf("second EnsureFile: reused %v, %v", reused, err)
	}
	if diff := cmp.Diff(res1, res2); diff != "" {
		t.Errorf("reused result (-first +second):\n%s", diff)
	}
	cfg.Stuck = 2
	if _, reused, err := s.EnsureFile(path, cfg); err != nil || reused {
		t.Fatalf("EnsureFile with a new config: reused %v, %v", reused, err)
	}
	if err := os.Truncate(path, 10); err != nil {
		t.Fatal(err)
	}
	res, reused, err := s.EnsureFile(path, cfg)
	if err != nil || reused {
		t.Fatalf("EnsureFile of a truncated file: reused %v, %v", reused, err)
	}
	if st, _ := os.Stat(path); st.Size() != res.Bytes {
		t.Errorf("file has %d bytes, result says %d", st.Size(), res.Bytes)
	}
}

// TestTemplatesLeaveOutRealClients checks that the real captures' own
// stuck and slow watches are not copied: only planted watchers are blocked
// in the initial phase.
func TestTemplatesLeaveOutRealClients(t *testing.T) {
	s := repo(t)
	data, _, err := s.Generate(dumpgen.Config{Goroutines: 5000})
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^goroutine (\d+) \[[^\]]*\]:\nk8s\.io/apiserver/pkg/storage/cacher\.\(\*cacheWatcher\)\.sendWatchCacheEvent\(.*\n.*\nk8s\.io/apiserver/pkg/storage/cacher\.\(\*cacheWatcher\)\.processInterval\(`)
	if m := re.FindSubmatch(data); m != nil {
		id, _ := strconv.Atoi(string(m[1]))
		t.Errorf("goroutine %d: a real client's initial-phase watcher was copied", id)
	}
	// And the templates did hold them (t1 and t2 have two each).
	for _, p := range mustPaths(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !re.Match(b) {
			t.Errorf("%s holds no initial-phase watcher: the check above proves nothing", p)
		}
	}
}

func mustPaths(t *testing.T) []string {
	t.Helper()
	ps, err := dumpgen.RepoTemplatePaths()
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// TestConfigErrors checks the refusals.
func TestConfigErrors(t *testing.T) {
	s := repo(t)
	for _, cfg := range []dumpgen.Config{
		{Goroutines: 0},
		{Goroutines: 7, Stuck: 2},
		{Goroutines: 10, Stuck: -1},
		{Goroutines: 10, Stuck: 1, WaitMinutes: -1},
	} {
		if _, err := s.Write(bufio.NewWriter(io.Discard), cfg); err == nil {
			t.Errorf("Write(%+v) succeeded, want an error", cfg)
		}
	}
}
