package watches

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// stackOfFrames is the stack of frames alone, roles decided without a memo.
func stackOfFrames(frames []stacks.Frame) stack {
	return oneStack(&stacks.Goroutine{Frames: frames})
}

func TestNamesDecideOncePerName(t *testing.T) {
	vendored := "k8s.io/kubernetes/vendor/" + fnSendWatchCacheEvent
	var n names
	for _, tc := range []struct {
		fn   string
		want nameInfo
	}{
		{fnSendWatchCacheEvent, nameInfo{canon: fnSendWatchCacheEvent, role: roleSend, apiServer: true}},
		{vendored, nameInfo{canon: fnSendWatchCacheEvent, role: roleSend, apiServer: true}},
		{"github.com/k3s-io/k3s/forks/kubernetes/staging/src/" + fnProcessInitialEvents, nameInfo{canon: fnProcessInitialEvents, role: roleInitialEvents, apiServer: true}},
		{"runtime.gopark", nameInfo{canon: "runtime.gopark"}},
		{"k8s.io/kubernetes/vendor/k8s.io/client-go/tools/cache.(*Reflector).Run", nameInfo{canon: "k8s.io/client-go/tools/cache.(*Reflector).Run"}},
		// A range-over-func body is another function.
		{fnProcessInitialEvents + "-range1", nameInfo{canon: fnProcessInitialEvents + "-range1", apiServer: true}},
	} {
		if diff := cmp.Diff(tc.want, n.info(tc.fn), cmp.AllowUnexported(nameInfo{})); diff != "" {
			t.Errorf("info(%q) (-want +got):\n%s", tc.fn, diff)
		}
		// The second answer comes from the memo, and is the same.
		if diff := cmp.Diff(tc.want, n.memo[tc.fn], cmp.AllowUnexported(nameInfo{})); diff != "" {
			t.Errorf("memo[%q] (-want +got):\n%s", tc.fn, diff)
		}
	}
}

func TestNamesMemoIsBounded(t *testing.T) {
	n := names{memo: make(map[string]nameInfo, maxNames)}
	for i := 0; i < maxNames; i++ {
		n.memo[strconv.Itoa(i)] = nameInfo{}
	}
	if got := n.info(fnSendWatchCacheEvent); got.role != roleSend {
		t.Errorf("info past the bound = %v, want roleSend", got.role)
	}
	if len(n.memo) != maxNames {
		t.Errorf("memo holds %d names past the bound, want %d", len(n.memo), maxNames)
	}
}

func TestResolveCanonicalisesInPlace(t *testing.T) {
	g := &stacks.Goroutine{
		Frames: []stacks.Frame{
			{Func: "runtime.gopark"},
			{Func: "k8s.io/kubernetes/vendor/" + fnSendWatchCacheEvent},
			{Func: "k8s.io/kubernetes/vendor/" + fnProcessInterval},
		},
		CreatedBy: stacks.Frame{Func: "k8s.io/kubernetes/vendor/" + fnCacherWatch},
	}
	var n names
	st := n.resolve(g, nil)
	got := []string{g.Frames[0].Func, g.Frames[1].Func, g.Frames[2].Func, g.CreatedBy.Func}
	if diff := cmp.Diff([]string{"runtime.gopark", fnSendWatchCacheEvent, fnProcessInterval, fnCacherWatch}, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]role{roleNone, roleSend, roleIntervalLoop}, st.roles); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	if st.created != roleCacherWatch || !st.hasCreator || st.top() != 1 || st.entry() != 2 || st.topRole() != roleSend || st.entryRole() != roleIntervalLoop {
		t.Errorf("stack = created %v (%v), top %d, entry %d: want the creator's role, top 1, entry 2", st.created, st.hasCreator, st.top(), st.entry())
	}
	if !st.isWatcher() {
		t.Error("isWatcher = false for a vendored processInterval goroutine")
	}
}

// TestNamesRecentByAddress: the cache by address answers only for the same
// string (address and length): a shorter string at the same address, or an
// equal one elsewhere, is decided on its own, and the same.
func TestNamesRecentByAddress(t *testing.T) {
	var n names
	long := fnProcessInitialEvents + "-range1"
	short := long[:len(fnProcessInitialEvents)] // the same address, shorter
	copyOf := strings.Clone(fnProcessInitialEvents)
	for _, tc := range []struct {
		fn   string
		want role
	}{
		{long, roleNone}, {short, roleInitialEvents}, {long, roleNone}, {copyOf, roleInitialEvents}, {short, roleInitialEvents},
	} {
		if got := n.role(tc.fn); got != tc.want {
			t.Errorf("role(%q) = %d, want %d", tc.fn, got, tc.want)
		}
	}
}

// TestReadDumpCanonicalisesOncePerName counts the classifier's work on a
// vendored rewrite of the real capture: each distinct function name is
// decided, and canonicalised, once, however many frames name it; a second
// read of the same dump into the same Collector decides nothing.
func TestReadDumpCanonicalisesOncePerName(t *testing.T) {
	var vendored strings.Builder
	for line := range strings.Lines(string(seedFile(t, "goroutine-debug2.txt"))) {
		switch {
		case strings.HasPrefix(line, "k8s.io/") && !strings.HasPrefix(line, "k8s.io/kubernetes"):
			line = "k8s.io/kubernetes/vendor/" + line
		case strings.HasPrefix(line, "created by k8s.io/") && !strings.HasPrefix(line, "created by k8s.io/kubernetes"):
			line = "created by k8s.io/kubernetes/vendor/" + strings.TrimPrefix(line, "created by ")
		}
		vendored.WriteString(line)
	}
	gs, _, err := stacks.ParseDebug2(strings.NewReader(vendored.String()))
	if err != nil {
		t.Fatal(err)
	}
	distinct, frames := map[string]bool{}, 0
	for _, g := range gs {
		for _, f := range append(g.Frames, g.CreatedBy) {
			if f.Func != "" {
				distinct[f.Func] = true
				frames++
			}
		}
	}
	c := NewCollector()
	for read := 1; read <= 2; read++ {
		before := canonicalCalls.Load()
		d, err := readDump(strings.NewReader(vendored.String()), ReadOptions{}, c)
		if err != nil {
			t.Fatal(err)
		}
		calls := canonicalCalls.Load() - before
		want := int64(len(distinct))
		if read == 2 {
			want = 0
		}
		if c.names.decided != len(distinct) || calls > want || len(d.Watchers) == 0 {
			t.Errorf("read %d: %d names decided and %d canonicalised for %d distinct names in %d frames (%d watchers): want %d decided, at most %d canonicalised",
				read, c.names.decided, calls, len(distinct), frames, len(d.Watchers), len(distinct), want)
		}
	}
	if frames < 5*len(distinct) {
		t.Fatalf("%d frames for %d names: the dump cannot tell once per name from once per frame", frames, len(distinct))
	}
}
