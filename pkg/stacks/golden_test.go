package stacks

import (
	"fmt"
	"slices"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// The golden tests read the real kube-apiserver v1.37.2 captures (see
// testdata/kube-apiserver-v1.37.2/README.md at the repository root) and
// compare a compact summary with testdata/golden/. Rewrite with
//
//	go test ./pkg/stacks -run Golden -update

// captures are the two captures of the seed reproduction.
var captures = []string{"t1", "t2"}

// stuckWatch are the goroutines of the stuck watch of slow-informer: the
// watcher in sendWatchCacheEvent, the HTTP/2 handler that created it, and
// the APF goroutine waiting for the watch to initialize.
var stuckWatch = []int64{33988, 33855, 33987}

const sendWatchCacheEvent = "k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).sendWatchCacheEvent"

// debug2Summary is the golden form of a debug=2 dump.
type debug2Summary struct {
	Goroutines int `json:"goroutines"`
	// States counts goroutines by state, and by state and wait.
	States      map[string]int `json:"states"`
	StateWaits  map[string]int `json:"stateWaits"`
	Locked      int            `json:"lockedToThread"`
	WithParent  int            `json:"withParentID"`
	HasParents  bool           `json:"hasParentIDs"`
	InSend      int            `json:"inSendWatchCacheEvent"`
	Stats       Stats          `json:"stats"`
	StuckWatch  []*Goroutine   `json:"stuckWatch"`
	MaxFrames   int            `json:"maxFrames"`
	Elided      int            `json:"framesElided"`
	Unavailable int            `json:"stackUnavailable"`
}

func containsFunc(frames []Frame, fn string) bool {
	return slices.ContainsFunc(frames, func(f Frame) bool { return f.Func == fn })
}

func TestGoldenDebug2(t *testing.T) {
	for _, c := range captures {
		t.Run(c, func(t *testing.T) {
			sc := NewScanner(golden.Open(t, c, "goroutine-debug2.txt"))
			s := debug2Summary{States: map[string]int{}, StateWaits: map[string]int{}}
			found := map[int64]*Goroutine{}
			for sc.Next() {
				g := sc.Goroutine()
				s.Goroutines++
				s.States[g.State]++
				s.StateWaits[fmt.Sprintf("%s, %d minutes", g.State, g.WaitMinutes)]++
				if g.LockedToThread {
					s.Locked++
				}
				if g.ParentID != 0 {
					s.WithParent++
				}
				if containsFunc(g.Frames, sendWatchCacheEvent) {
					s.InSend++
				}
				if g.FramesElided {
					s.Elided++
				}
				if g.StackUnavailable {
					s.Unavailable++
				}
				s.MaxFrames = max(s.MaxFrames, len(g.Frames))
				if slices.Contains(stuckWatch, g.ID) {
					found[g.ID] = g.Clone()
				}
			}
			if err := sc.Err(); err != nil {
				t.Fatal(err)
			}
			s.Stats = sc.Stats()
			s.HasParents = s.Stats.HasParentIDs()
			for _, id := range stuckWatch {
				if found[id] == nil {
					t.Fatalf("goroutine %d of the stuck watch not found", id)
				}
				s.StuckWatch = append(s.StuckWatch, found[id])
			}
			// The facts the diagnosis relies on, beyond the golden file.
			watcher := found[33988]
			if TopFunc(watcher.Frames) != sendWatchCacheEvent || watcher.ParentID != 33855 || found[33987].ParentID != 33855 {
				t.Errorf("stuck watcher: top %s parent %d, APF waiter parent %d; want %s, 33855, 33855",
					TopFunc(watcher.Frames), watcher.ParentID, found[33987].ParentID, sendWatchCacheEvent)
			}
			if wantWait := map[string]int{"t1": 0, "t2": 2}[c]; watcher.State != "select" || watcher.WaitMinutes != wantWait {
				t.Errorf("stuck watcher [%s, %d minutes], want [select, %d minutes]", watcher.State, watcher.WaitMinutes, wantWait)
			}
			if s.Stats.SkippedLines != 0 {
				t.Errorf("real dump has skipped lines: %v", s.Stats.Skipped)
			}
			golden.Assert(t, golden.FixtureName(c, "goroutine-debug2.txt"), golden.JSON(t, s))
		})
	}
}

// aggSummary is the golden form of a debug=1 or protobuf dump.
type aggSummary struct {
	Total        int       `json:"total"`
	Stacks       int       `json:"stacks"`
	Labelled     int       `json:"labelledStacks"`
	SkippedLines int       `json:"skippedLines"`
	Skipped      []Skipped `json:"skipped,omitempty"`
	// InSend are the stacks holding sendWatchCacheEvent, in full, and the
	// goroutines they count.
	InSendGoroutines int     `json:"inSendWatchCacheEventGoroutines"`
	InSend           []Stack `json:"inSendWatchCacheEvent"`
}

func summarize(a *Aggregated) aggSummary {
	s := aggSummary{Total: a.Total, Stacks: len(a.Stacks), SkippedLines: a.SkippedLines, Skipped: a.Skipped}
	for _, st := range a.Stacks {
		if len(st.Labels) > 0 {
			s.Labelled++
		}
		if containsFunc(st.Frames, sendWatchCacheEvent) {
			s.InSend = append(s.InSend, st)
			s.InSendGoroutines += st.Count
		}
	}
	return s
}

func TestGoldenAggregated(t *testing.T) {
	for _, c := range captures {
		t.Run(c, func(t *testing.T) {
			d1, err := ParseDebug1(golden.Open(t, c, "goroutine-debug1.txt"))
			if err != nil {
				t.Fatal(err)
			}
			pb, err := ParseProfile(golden.Open(t, c, "goroutine.pb.gz"))
			if err != nil {
				t.Fatal(err)
			}
			s1, s0 := summarize(d1), summarize(pb)
			golden.Assert(t, golden.FixtureName(c, "goroutine-debug1.txt"), golden.JSON(t, s1))
			golden.Assert(t, golden.FixtureName(c, "goroutine.pb.gz"), golden.JSON(t, s0))

			// The two forms of one capture agree on what the diagnosis
			// counts, though the text hides the runtime's parking frames.
			if s1.Total != s0.Total || s1.Stacks != s0.Stacks {
				t.Errorf("debug=1 has %d goroutines in %d stacks, protobuf %d in %d", s1.Total, s1.Stacks, s0.Total, s0.Stacks)
			}
			if len(s1.InSend) != len(s0.InSend) || s1.InSendGoroutines != s0.InSendGoroutines || s1.InSendGoroutines == 0 {
				t.Errorf("stacks in sendWatchCacheEvent: debug=1 %d (%d goroutines), protobuf %d (%d goroutines)",
					len(s1.InSend), s1.InSendGoroutines, len(s0.InSend), s0.InSendGoroutines)
			}
			for _, a := range []*Aggregated{d1, pb} {
				if a.SkippedLines != 0 {
					t.Errorf("real dump has skipped lines: %v", a.Skipped)
				}
			}
			// And with the debug=2 dump of the same capture.
			gs, _, err := ParseDebug2(golden.Open(t, c, "goroutine-debug2.txt"))
			if err != nil {
				t.Fatal(err)
			}
			inSend := 0
			for _, g := range gs {
				if containsFunc(g.Frames, sendWatchCacheEvent) {
					inSend++
				}
			}
			if len(gs) != s1.Total || inSend != s1.InSendGoroutines {
				t.Errorf("debug=2 has %d goroutines, %d in sendWatchCacheEvent; debug=1 %d, %d", len(gs), inSend, s1.Total, s1.InSendGoroutines)
			}
		})
	}
}
