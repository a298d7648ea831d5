package stacks

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// The tests in this file park goroutines in known states in this process,
// take real dumps with runtime/pprof and check what the parsers make of
// them. Goroutines report their id and the line they will block on over a
// channel; the dump is retaken (yielding with runtime.Gosched, never
// sleeping) until every one of them shows as blocked.

const pkgPath = "github.com/watch-doctor/watch-doctor/pkg/stacks"

// parkedG is a goroutine parked by startParked, and what a dump must say
// about it.
type parkedG struct {
	ID int64
	// Top is the function holding the blocking statement, at Line.
	Top  string
	Line int
	// State, Locked and Labels are what the header must say (labels only
	// with GODEBUG=tracebacklabels=1).
	State  string
	Locked bool
	Labels map[string]string
	// Creator ran the go statement in goroutine Parent.
	Creator string
	Parent  int64
}

// nextLine returns the line after the caller's.
func nextLine() int {
	_, _, line, _ := runtime.Caller(1)
	return line + 1
}

func parkRecv(ready chan<- parkedG, stop <-chan struct{}, creator string, parent int64) {
	g := parkedG{ID: golden.GoroutineID(), Top: pkgPath + ".parkRecv", State: "chan receive", Creator: creator, Parent: parent}
	g.Line = nextLine() + 1
	ready <- g
	<-stop
}

func parkSelect(ready chan<- parkedG, stop <-chan struct{}, creator string, parent int64) {
	never := make(chan int)
	g := parkedG{ID: golden.GoroutineID(), Top: pkgPath + ".parkSelect", State: "select", Creator: creator, Parent: parent}
	g.Line = nextLine() + 1
	ready <- g
	select {
	case <-stop:
	case <-never:
	}
}

func parkLocked(ready chan<- parkedG, stop <-chan struct{}, creator string, parent int64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	g := parkedG{ID: golden.GoroutineID(), Top: pkgPath + ".parkLocked", State: "chan receive", Locked: true, Creator: creator, Parent: parent}
	g.Line = nextLine() + 1
	ready <- g
	<-stop
}

func parkLabelled(ready chan<- parkedG, stop <-chan struct{}, creator string, parent int64) {
	pprof.Do(context.Background(), pprof.Labels("watch", "stuck", "user", "slow-informer, inc."), func(context.Context) {
		g := parkedG{ID: golden.GoroutineID(), Top: pkgPath + ".parkLabelled.func1", State: "chan receive",
			Labels: map[string]string{"watch": "stuck", "user": "slow-informer, inc."}, Creator: creator, Parent: parent}
		g.Line = nextLine() + 1
		ready <- g
		<-stop
	})
}

// parkParent starts parkRecv itself, so that the child names it as parent.
func parkParent(ready chan<- parkedG, stop <-chan struct{}, creator string, parent int64, wg *sync.WaitGroup) {
	me := golden.GoroutineID()
	wg.Add(1)
	go func() {
		defer wg.Done()
		parkRecv(ready, stop, pkgPath+".parkParent", me)
	}()
	g := parkedG{ID: me, Top: pkgPath + ".parkParent", State: "chan receive", Creator: creator, Parent: parent}
	g.Line = nextLine() + 1
	ready <- g
	<-stop
}

// startParked starts one goroutine of each kind and returns them once
// each has reported; they exit when the test ends.
func startParked(t testing.TB) []parkedG {
	t.Helper()
	ready := make(chan parkedG)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
	})
	me, creator := golden.GoroutineID(), pkgPath+".startParked"
	for _, park := range []func(chan<- parkedG, <-chan struct{}, string, int64){parkRecv, parkSelect, parkLocked, parkLabelled} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			park(ready, stop, creator, me)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		parkParent(ready, stop, creator, me, &wg)
	}()
	var gs []parkedG
	for range 6 {
		gs = append(gs, <-ready)
	}
	return gs
}

// dumpParked takes debug=2 dumps until every goroutine of gs shows
// blocked in its wanted state, and returns that dump.
func dumpParked(t testing.TB, gs []parkedG) []byte {
	t.Helper()
	for attempt := 0; ; attempt++ {
		var buf bytes.Buffer
		if err := pprof.Lookup("goroutine").WriteTo(&buf, 2); err != nil {
			t.Fatal(err)
		}
		parsed, _, err := ParseDebug2(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("parsing a real debug=2 dump: %v\n%s", err, buf.Bytes())
		}
		state := map[int64]string{}
		for _, g := range parsed {
			state[g.ID] = g.State
		}
		blocked := true
		for _, g := range gs {
			blocked = blocked && state[g.ID] == g.State
		}
		if blocked {
			return buf.Bytes()
		}
		if attempt == 100_000 {
			t.Fatalf("goroutines never all blocked; last dump:\n%s", buf.Bytes())
		}
		runtime.Gosched()
	}
}

// parkedView is what the tests compare for one parked goroutine.
type parkedView struct {
	ID      int64
	Top     string
	Line    int
	File    string
	State   string
	Locked  bool
	Labels  map[string]string
	Creator string
	Parent  int64
}

func wantView(p parkedG, labels bool) parkedView {
	v := parkedView{ID: p.ID, Top: p.Top, Line: p.Line, File: "inprocess_test.go", State: p.State, Locked: p.Locked,
		Creator: p.Creator, Parent: p.Parent}
	if labels {
		v.Labels = p.Labels
	}
	return v
}

func gotView(g *Goroutine) parkedView {
	v := parkedView{ID: g.ID, State: g.State, Locked: g.LockedToThread, Labels: g.Labels, Creator: g.CreatedBy.Func, Parent: g.ParentID}
	for _, f := range g.Frames {
		if f.Func == TopFunc(g.Frames) {
			v.Top, v.Line, v.File = f.Func, f.Line, path.Base(f.File)
			break
		}
	}
	return v
}

// checkParked finds every parked goroutine in a parsed dump.
func checkParked(t *testing.T, parked []parkedG, gs []*Goroutine, labels bool) {
	t.Helper()
	byID := map[int64]*Goroutine{}
	for _, g := range gs {
		byID[g.ID] = g
	}
	for _, p := range parked {
		g := byID[p.ID]
		if g == nil {
			t.Errorf("goroutine %d (%s) not in the dump", p.ID, p.Top)
			continue
		}
		if diff := cmp.Diff(wantView(p, labels), gotView(g)); diff != "" {
			t.Errorf("goroutine %d mismatch (-want +got):\n%s", p.ID, diff)
		}
	}
}

func TestRealDumpDebug2(t *testing.T) {
	t.Setenv("GODEBUG", "tracebacklabels=1")
	parked := startParked(t)
	dump := dumpParked(t, parked)
	gs, st, err := ParseDebug2(bytes.NewReader(dump))
	if err != nil {
		t.Fatal(err)
	}
	checkParked(t, parked, gs, true)
	if gs[0].State != "running" || TopFunc(gs[0].Frames) != "runtime/pprof.writeGoroutineStacks" {
		t.Errorf("first goroutine is %q in %q, want the running one in runtime/pprof.writeGoroutineStacks", gs[0].State, TopFunc(gs[0].Frames))
	}
	if st.SkippedLines != 0 || !st.HasParentIDs() || st.Goroutines != len(gs) || st.Bytes != int64(len(dump)) {
		t.Errorf("stats %+v: want no skipped lines, parent ids, %d goroutines, %d bytes", st, len(gs), len(dump))
	}
}

// TestRealDumpSystem reads the goroutines of a crash at
// GOTRACEBACK=system (runtime.Stack, and so /debug/pprof, always prints at
// the default level): headers carry gp/m/mp, frames carry fp/sp/pc, and
// runtime frames and the runtime's own goroutines ("force gc (idle)")
// show.
func TestRealDumpSystem(t *testing.T) {
	dump, parked := helperRun(t, "crash", "GOTRACEBACK=system", "GODEBUG=tracebacklabels=1")
	for _, want := range []string{" gp=0x", " mp=0x", " m=nil", " fp=0x", "\nruntime.gopark(", "[select (no cases)", "(idle)"} {
		if !strings.Contains(dump, want) {
			t.Errorf("the crash dump holds no %q", want)
		}
	}
	gs, st, err := ParseDebug2(strings.NewReader(dump))
	if err != nil {
		t.Fatalf("%v\n%s", err, dump)
	}
	checkParked(t, parked, gs, true)
	if st.SkippedLines != 0 {
		t.Errorf("skipped lines in a real GOTRACEBACK=system dump: %v", st.Skipped)
	}
	states := map[string]bool{}
	for _, g := range gs {
		states[g.State] = true
	}
	for _, want := range []string{"running", "select (no cases)", "force gc (idle)", "chan receive", "select"} {
		if !states[want] {
			t.Errorf("no goroutine in state %q; states: %v", want, states)
		}
	}
	if t.Failed() {
		t.Logf("dump:\n%s", dump)
	}
}

func TestRealDumpDebug1AndProfile(t *testing.T) {
	parked := startParked(t)
	dumpParked(t, parked)
	var d1, pb bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&d1, 1); err != nil {
		t.Fatal(err)
	}
	if err := pprof.Lookup("goroutine").WriteTo(&pb, 0); err != nil {
		t.Fatal(err)
	}
	a1, err := ParseDebug1(bytes.NewReader(d1.Bytes()))
	if err != nil {
		t.Fatalf("ParseDebug1: %v\n%s", err, d1.Bytes())
	}
	a0, err := ParseProfile(bytes.NewReader(pb.Bytes()))
	if err != nil {
		t.Fatalf("ParseProfile: %v", err)
	}
	for _, c := range []struct {
		name string
		a    *Aggregated
	}{{"debug=1", a1}, {"protobuf", a0}} {
		t.Run(c.name, func(t *testing.T) {
			if c.a.SkippedLines != 0 {
				t.Errorf("skipped %v", c.a.Skipped)
			}
			sum := 0
			for _, st := range c.a.Stacks {
				sum += st.Count
			}
			if sum != c.a.Total || c.a.Total < len(parked) {
				t.Errorf("Total %d, counts add up to %d, want equal and >= %d", c.a.Total, sum, len(parked))
			}
			for _, p := range parked {
				var found []Stack
				for _, st := range c.a.Stacks {
					if TopFunc(st.Frames) == p.Top {
						found = append(found, st)
					}
				}
				// parkParent's child runs parkRecv too, from another
				// caller: find the stack by its outer frames as well.
				if len(found) == 0 {
					t.Errorf("no stack with %s on top", p.Top)
					continue
				}
				for _, st := range found {
					top := st.Frames[0]
					for _, f := range st.Frames {
						if f.Func == p.Top {
							top = f
							break
						}
					}
					if top.Line != p.Line || path.Base(top.File) != "inprocess_test.go" {
						t.Errorf("%s at %s:%d, want inprocess_test.go:%d", p.Top, top.File, top.Line, p.Line)
					}
					if p.Labels != nil && !cmp.Equal(p.Labels, st.Labels) {
						t.Errorf("%s labels %v, want %v", p.Top, st.Labels, p.Labels)
					}
				}
			}
		})
	}
	// The text form hides the runtime's parking frames; the protobuf keeps
	// them. Both count the same goroutines.
	if a1.Total != a0.Total {
		t.Logf("debug=1 total %d, protobuf total %d (taken one after the other)", a1.Total, a0.Total)
	}
}

// TestRealDumpSynctest parks goroutines durably in a synctest bubble:
// their headers say "(durable)" and ", synctest bubble N".
func TestRealDumpSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ch, other := make(chan int), make(chan int)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-ch
		}()
		go func() {
			defer wg.Done()
			select {
			case <-ch:
			case <-other:
			}
		}()
		synctest.Wait() // both are durably blocked now
		var buf bytes.Buffer
		if err := pprof.Lookup("goroutine").WriteTo(&buf, 2); err != nil {
			t.Fatal(err)
		}
		close(ch)
		wg.Wait()
		dumpText := buf.String()
		gs, st, err := ParseDebug2(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if st.SkippedLines != 0 {
			t.Errorf("skipped %v", st.Skipped)
		}
		var got []string
		for _, g := range gs {
			if strings.HasPrefix(g.CreatedBy.Func, pkgPath+".TestRealDumpSynctest") {
				got = append(got, fmt.Sprintf("%s %q", g.State, g.Flags))
			}
		}
		var bubble string
		for _, g := range gs {
			for _, f := range g.Flags {
				if strings.HasPrefix(f, "synctest bubble ") && g.State == "chan receive" {
					bubble = f
				}
			}
		}
		want := []string{
			fmt.Sprintf("chan receive [%q %q]", "durable", bubble),
			fmt.Sprintf("select [%q %q]", "durable", bubble),
		}
		if diff := cmp.Diff(want, got, cmpSortStrings); diff != "" {
			t.Errorf("bubbled goroutines (-want +got):\n%s\n%s", diff, dumpText)
		}
	})
}

var cmpSortStrings = cmp.Transformer("sort", func(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
})

// helperEnv makes the test binary write a dump instead of testing, for
// settings read only at startup (GODEBUG=tracebackancestors) and for crash
// output (GOTRACEBACK=system).
const helperEnv = "WATCH_DOCTOR_STACKS_HELPER"

// TestHelperProcess is not a test. Run with helperEnv=dump, it parks
// goroutines, writes a debug=2 dump to stderr and the parked goroutines to
// stdout; with helperEnv=crash, it writes the parked goroutines, then
// crashes, and the runtime writes every goroutine to stderr.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		return
	}
	parked := startParked(t)
	dump := dumpParked(t, parked)
	for _, p := range parked {
		fmt.Printf("parked %d %s %d %d %s\n", p.ID, p.Top, p.Line, p.Parent, p.Creator)
	}
	if mode == "dump" {
		os.Stderr.Write(dump)
		return
	}
	// A goroutine in "select (no cases)", then the crash.
	go func() { select {} }()
	for {
		var buf bytes.Buffer
		pprof.Lookup("goroutine").WriteTo(&buf, 2)
		if bytes.Contains(buf.Bytes(), []byte("[select (no cases)]:")) {
			break
		}
		runtime.Gosched()
	}
	go func() { panic("watch-doctor: crash for the test") }()
	<-make(chan int)
}

// helperRun runs the test binary as a helper in mode with extra
// environment and returns its dump and parked goroutines.
func helperRun(t *testing.T, mode string, env ...string) (string, []parkedG) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+mode), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if crashed := err != nil; crashed != (mode == "crash") {
		t.Fatalf("helper process: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.Bytes(), stderr.Bytes())
	}
	var parked []parkedG
	for _, line := range strings.Split(stdout.String(), "\n") {
		var p parkedG
		if n, _ := fmt.Sscanf(line, "parked %d %s %d %d %s", &p.ID, &p.Top, &p.Line, &p.Parent, &p.Creator); n == 5 {
			p.State = map[string]string{pkgPath + ".parkSelect": "select"}[p.Top]
			if p.State == "" {
				p.State = "chan receive"
			}
			if p.Top == pkgPath+".parkLabelled.func1" {
				p.Labels = map[string]string{"watch": "stuck", "user": "slow-informer, inc."}
			}
			p.Locked = p.Top == pkgPath+".parkLocked"
			parked = append(parked, p)
		}
	}
	if len(parked) != 6 {
		t.Fatalf("helper process reported %d parked goroutines, want 6:\n%s", len(parked), stdout.Bytes())
	}
	dump := stderr.String()
	// A crash starts with the panic message.
	if i := strings.Index(dump, "\ngoroutine "); mode == "crash" && i >= 0 {
		dump = dump[i+1:]
	}
	return dump, parked
}

// TestRealDumpAncestors reads a dump written with
// GODEBUG=tracebackancestors=5, where every goroutine is followed by the
// stacks of its ancestors.
func TestRealDumpAncestors(t *testing.T) {
	dump, parked := helperRun(t, "dump", "GODEBUG=tracebackancestors=5")
	if !strings.Contains(dump, "[originating from goroutine ") {
		t.Fatalf("no ancestors in the dump:\n%.3000s", dump)
	}
	gs, st, err := ParseDebug2(strings.NewReader(dump))
	if err != nil {
		t.Fatal(err)
	}
	if st.SkippedLines != 0 {
		t.Errorf("skipped %v", st.Skipped)
	}
	byID := map[int64]*Goroutine{}
	for _, g := range gs {
		byID[g.ID] = g
	}
	for _, p := range parked {
		g := byID[p.ID]
		if g == nil {
			t.Errorf("goroutine %d (%s) not in the dump", p.ID, p.Top)
			continue
		}
		// Ancestor frames are not this goroutine's.
		if diff := cmp.Diff(wantView(p, false), gotView(g), cmpopts.IgnoreFields(parkedView{}, "Creator")); diff != "" {
			t.Errorf("goroutine %d mismatch (-want +got):\n%s", p.ID, diff)
		}
		for _, f := range g.Frames {
			if strings.HasPrefix(f.Func, "testing.") {
				t.Errorf("goroutine %d holds its ancestors' frame %s", p.ID, f.Func)
			}
		}
	}
}
