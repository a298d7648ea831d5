package trace

import (
	"cmp"
	"errors"
	"slices"
	"strings"

	xtrace "golang.org/x/exp/trace"
)

// maxWakerIDs bounds the distinct wakers counted per goroutine before the
// rest go to OtherWakers; maxInterned the distinct strings shared.
const (
	maxWakerIDs = 64
	maxInterned = 1 << 16
)

// state is one Read in progress. Not safe for concurrent use.
type state struct {
	opts        Options
	maxG, maxF  int
	sum         Summary
	kept        map[int64]*tracked
	dropped     map[int64]struct{}
	keepCache   map[xtrace.Stack]bool // this generation's stacks
	interned    map[string]string
	buf         []Frame
	first, last xtrace.Time
	genStart    xtrace.Time // the current generation's Sync
	// syncBytes is how far the stream was read at the last Sync.
	syncBytes     int64
	started       bool
	clock         *xtrace.ClockSnapshot
	progressSlice []ProgressGoroutine
}

// tracked is one kept goroutine while reading.
type tracked struct {
	g          Goroutine
	stack      xtrace.Stack // the stack g.Stack was converted from
	cut        bool
	firstSeen  xtrace.Time
	lastChange xtrace.Time
	exitedAt   xtrace.Time
	exited     bool
	wakers     map[int64]int
}

func newState(opts Options) *state {
	s := &state{
		opts: opts, maxG: opts.MaxGoroutines, maxF: opts.MaxFrames,
		kept: map[int64]*tracked{}, dropped: map[int64]struct{}{},
		keepCache: map[xtrace.Stack]bool{}, interned: map[string]string{},
	}
	if s.maxG <= 0 {
		s.maxG = DefaultMaxGoroutines
	}
	if s.maxF <= 0 {
		s.maxF = DefaultMaxFrames
	}
	s.sum.Source = opts.Source
	return s
}

// event takes one event; false means the caller's Progress asked to stop.
func (s *state) event(ev *xtrace.Event, bytes int64) bool {
	t := ev.Time()
	if !s.started {
		s.first, s.started = t, true
	}
	s.last = t
	switch ev.Kind() {
	case xtrace.EventSync:
		sync := ev.Sync()
		if sync.ClockSnapshot != nil && s.clock == nil {
			c := *sync.ClockSnapshot
			s.clock = &c
		}
		// Stacks are per generation: forget the last one's, so that no
		// kept goroutine holds its tables (an exited one would hold them
		// to the end).
		clear(s.keepCache)
		for _, tg := range s.kept {
			tg.stack = xtrace.NoStack
		}
		s.genStart = t
		s.generationRead(bytes)
		if sync.N > 1 {
			s.sum.Generations++
			return s.progress(bytes)
		}
	case xtrace.EventStateTransition:
		st := ev.StateTransition()
		if st.Resource.Kind == xtrace.ResourceGoroutine {
			s.transition(ev, &st, t)
		}
	}
	return true
}

// generationRead records the size of the generation whose Sync came at
// bytes into the stream: the decoder reads a whole generation before it
// yields the generation's Sync, so the bytes since the previous Sync are
// this generation's (the first one's with the header). The Sync that
// ends the trace follows no new bytes and records nothing.
func (s *state) generationRead(bytes int64) {
	n := bytes - s.syncBytes
	s.syncBytes = bytes
	if n <= 0 {
		return
	}
	if s.sum.SmallestGeneration == 0 || n < s.sum.SmallestGeneration {
		s.sum.SmallestGeneration = n
	}
}

// transition updates the goroutine st is about.
func (s *state) transition(ev *xtrace.Event, st *xtrace.StateTransition, t xtrace.Time) {
	id := int64(st.Resource.Goroutine())
	from, to := st.Goroutine()
	changed := from != to && from != xtrace.GoUndetermined
	tg := s.kept[id]
	if tg == nil {
		tg = s.admit(id, st, t, from, to, changed)
		if tg == nil {
			return
		}
	} else if st.Stack != xtrace.NoStack && st.Stack != tg.stack {
		tg.g.Stack, tg.cut = s.frames(st.Stack, tg.g.Stack[:0])
		tg.stack = st.Stack
	}
	if to == xtrace.GoWaiting && st.Reason != "" {
		tg.g.Reason = s.intern(st.Reason)
	}
	if changed && t > tg.firstSeen {
		tg.g.Transitions++
		tg.g.LongestGap = max(tg.g.LongestGap, t.Sub(tg.lastChange))
		tg.lastChange = t
	}
	if from == xtrace.GoWaiting && to == xtrace.GoRunnable {
		tg.g.Wakeups++
		waker := max(0, int64(ev.Goroutine())) // NoGoroutine (-1) is 0
		if _, ok := tg.wakers[waker]; ok || len(tg.wakers) < maxWakerIDs {
			tg.wakers[waker]++
		} else {
			tg.g.OtherWakers++
		}
	}
	tg.g.EndState = stateOf(to)
	if to == xtrace.GoNotExist {
		tg.exited, tg.exitedAt = true, t
	}
}

// admit asks Keep about a goroutine not kept yet; nil when it is not kept.
func (s *state) admit(id int64, st *xtrace.StateTransition, t xtrace.Time, from, to xtrace.GoState, changed bool) *tracked {
	if st.Stack == xtrace.NoStack {
		return nil
	}
	keep, seen := s.keepCache[st.Stack]
	if !seen {
		keep = s.opts.Keep == nil || s.opts.Keep(s.scratch(st.Stack))
		s.keepCache[st.Stack] = keep
	}
	if !keep {
		return nil
	}
	if len(s.kept) >= s.maxG {
		if len(s.dropped) < s.maxG {
			s.dropped[id] = struct{}{}
		}
		return nil
	}
	frames, cut := s.frames(st.Stack, nil)
	// A status that is no change proves the state since the generation
	// began: the runtime writes a goroutine's status before its first
	// event in a generation, or, for one with no event in it, when the
	// generation ends (Go 1.26 runtime/trace.go:494-745, traceAdvance).
	since := s.genStart
	if changed {
		since = t
	}
	tg := &tracked{
		g:     Goroutine{ID: id, Stack: frames, StartState: stateOf(to), EndState: stateOf(to)},
		stack: st.Stack, cut: cut, firstSeen: since, lastChange: since, wakers: map[int64]int{},
	}
	if changed {
		// First seen changing state: the change is at t, and it counts.
		tg.g.StartState = stateOf(from)
		tg.g.Transitions = 1
	}
	s.kept[id] = tg
	return tg
}

// frames converts a stack into dst, innermost first, cut to MaxFrames.
func (s *state) frames(stk xtrace.Stack, dst []Frame) (out []Frame, cut bool) {
	for f := range stk.Frames() {
		if len(dst) == s.maxF {
			return dst, true
		}
		dst = append(dst, Frame{Func: s.intern(f.Func), File: s.intern(f.File), Line: int(f.Line)})
	}
	return dst, false
}

// scratch converts a stack for Keep into a buffer reused from call to
// call, cut to MaxFrames like frames, with the names as the decoder holds
// them (valid while its generation is): asking about a stack that is not
// kept allocates nothing.
func (s *state) scratch(stk xtrace.Stack) []Frame {
	s.buf = s.buf[:0]
	for f := range stk.Frames() {
		if len(s.buf) == s.maxF {
			break
		}
		s.buf = append(s.buf, Frame{Func: f.Func, File: f.File, Line: int(f.Line)})
	}
	return s.buf
}

// intern shares one copy of each function and file name, so a kept stack
// holds no reference into a generation's buffers.
func (s *state) intern(v string) string {
	if c, ok := s.interned[v]; ok {
		return c
	}
	c := strings.Clone(v)
	if len(s.interned) < maxInterned {
		s.interned[c] = c
	}
	return c
}

func (s *state) progress(bytes int64) bool {
	if s.opts.Progress == nil {
		return true
	}
	s.progressSlice = s.progressSlice[:0]
	for _, tg := range s.kept {
		s.progressSlice = append(s.progressSlice, ProgressGoroutine{
			ID: tg.g.ID, Stack: tg.g.Stack, Transitions: tg.g.Transitions, FirstSeen: tg.firstSeen.Sub(s.first),
		})
	}
	slices.SortFunc(s.progressSlice, func(a, b ProgressGoroutine) int { return cmp.Compare(a.ID, b.ID) })
	return s.opts.Progress(Progress{
		Window: s.last.Sub(s.first), Generations: s.sum.Generations, Bytes: bytes, Goroutines: s.progressSlice,
	})
}

// finish closes the window and builds the Summary; fault is what stopped
// the read early, if anything.
func (s *state) finish(cr *countingReader, fault error) (*Summary, error) {
	sum := &s.sum
	sum.Bytes = cr.n
	if s.started {
		sum.Window = s.last.Sub(s.first)
		sum.Start, sum.End = wall(s.clock, s.first), wall(s.clock, s.last)
	}
	sum.DroppedGoroutines = len(s.dropped)
	sum.Goroutines = make([]Goroutine, 0, len(s.kept))
	for _, tg := range s.kept {
		end := s.last
		if tg.exited {
			end = tg.exitedAt
		}
		g := tg.g
		g.FirstSeen = tg.firstSeen.Sub(s.first)
		g.LongestGap = max(g.LongestGap, end.Sub(tg.lastChange))
		g.WokenBy, g.OtherWakers = topWakers(tg.wakers, g.OtherWakers)
		if tg.cut {
			sum.CutStacks++
		}
		sum.Goroutines = append(sum.Goroutines, g)
	}
	slices.SortFunc(sum.Goroutines, func(a, b Goroutine) int { return cmp.Compare(a.ID, b.ID) })
	var err error
	switch {
	case cr.exceeded:
		err = &LimitError{Source: s.opts.Source, Limit: cr.limit}
	case fault != nil && errors.Is(fault, errLimit):
		err = &LimitError{Source: s.opts.Source, Limit: cr.limit}
	case cr.err != nil:
		// The stream failed: its own error says why, the decoder's only
		// that a batch was short.
		err = &TruncatedError{Source: s.opts.Source, Bytes: cr.n, Generations: sum.Generations, Err: cr.err}
	case fault != nil:
		err = &TruncatedError{Source: s.opts.Source, Bytes: cr.n, Generations: sum.Generations, Err: fault}
	}
	if err != nil {
		sum.Truncated, sum.StoppedEarly = true, false
		sum.Why = err.Error()
	}
	return sum, err
}

// topWakers sorts wakers by count (then id) and keeps MaxWakers of them.
func topWakers(m map[int64]int, other int) ([]Waker, int) {
	if len(m) == 0 {
		return nil, other
	}
	ws := make([]Waker, 0, len(m))
	for id, n := range m {
		ws = append(ws, Waker{ID: id, Count: n})
	}
	slices.SortFunc(ws, func(a, b Waker) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.ID, b.ID))
	})
	if len(ws) > MaxWakers {
		for _, w := range ws[MaxWakers:] {
			other += w.Count
		}
		ws = ws[:MaxWakers]
	}
	return ws, other
}

func stateOf(s xtrace.GoState) State {
	switch s {
	case xtrace.GoNotExist:
		return StateNotExist
	case xtrace.GoRunnable:
		return StateRunnable
	case xtrace.GoRunning:
		return StateRunning
	case xtrace.GoWaiting:
		return StateWaiting
	case xtrace.GoSyscall:
		return StateSyscall
	}
	return StateUnknown
}
