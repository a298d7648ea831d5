package watches

import "unsafe"

// tally counts goroutines by a string the scanner interned (a state, a
// top function). Most goroutines' key is answered by its address alone,
// from a direct-mapped cache that holds the strings it keys (so an
// address is never reused while it is there), the others by one map
// lookup. Not safe for concurrent use.
type tally struct {
	counts map[string]*int
	// max bounds the keys counted (0: no bound): a key first seen past it
	// is not counted, the keys already there still are.
	max    int
	recent *[tallyRecent]tallySlot
}

// tallyRecent is the size of tally's cache by address: a power of two,
// a few times the distinct states or top functions of a dump.
const tallyRecent = 1 << 10

// tallySlot is one slot of tally's cache by address.
type tallySlot struct {
	p     *byte
	n     int
	count *int
}

// add counts one more k.
func (t *tally) add(k string) {
	if t.recent == nil {
		t.recent = new([tallyRecent]tallySlot)
	}
	p := unsafe.StringData(k)
	slot := &t.recent[(uintptr(unsafe.Pointer(p))>>4^uintptr(len(k)))&(tallyRecent-1)]
	if slot.count != nil && slot.p == p && slot.n == len(k) {
		*slot.count++
		return
	}
	n, ok := t.counts[k]
	if !ok {
		if t.max > 0 && len(t.counts) >= t.max {
			return
		}
		if t.counts == nil {
			t.counts = map[string]*int{}
		}
		n = new(int)
		t.counts[k] = n
	}
	*n++
	*slot = tallySlot{p: p, n: len(k), count: n}
}

// snapshot returns the counts so far.
func (t *tally) snapshot() map[string]int {
	out := make(map[string]int, len(t.counts))
	for k, n := range t.counts {
		out[k] = *n
	}
	return out
}
