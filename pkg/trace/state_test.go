package trace

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"testing"

	xtrace "golang.org/x/exp/trace"
)

// A kept goroutine must not hold a stack of an earlier generation: an
// xtrace.Stack refers to its generation's tables (stacks, frames,
// strings), and one kept goroutine that exited in each generation would
// otherwise keep every generation's tables to the end of the read. On the
// seed server's real trace, with every goroutine kept, no kept goroutine
// holds a stack right after each generation's Sync.
func TestSyncForgetsTheLastGenerationsStacks(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "trace-seed", "bundle", "127.0.0.1", "trace.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	xr, err := xtrace.NewReader(bufio.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	s := newState(Options{Source: "seed"})
	syncs, held := 0, 0
	for {
		ev, err := xr.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		s.event(&ev, 0)
		if ev.Kind() != xtrace.EventSync {
			continue
		}
		syncs++
		for _, tg := range s.kept {
			if tg.stack != xtrace.NoStack {
				held++
			}
		}
	}
	if syncs < 10 || len(s.kept) < 1000 {
		t.Fatalf("read %d generations keeping %d goroutines: want the seed trace's 20 and its 2,000-odd goroutines", syncs, len(s.kept))
	}
	if held != 0 {
		t.Errorf("%d times a kept goroutine held an earlier generation's stack after a Sync (%d generations), want 0", held, syncs)
	}
}
