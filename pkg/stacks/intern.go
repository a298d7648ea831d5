package stacks

import "encoding/binary"

// recentSize is the number of slots of Scanner.recent.
const (
	recentBits = 12
	recentSize = 1 << recentBits
)

// recentSlot picks b's slot in Scanner.recent from its length and two
// 8-byte words (the end and the middle: names sharing a prefix, like
// "k8s.io/apiserver/pkg/...", differ there).
func recentSlot(b []byte) uint64 {
	n := len(b)
	h := uint64(n)
	if n >= 8 {
		h ^= binary.LittleEndian.Uint64(b[n-8:])
		h ^= binary.LittleEndian.Uint64(b[(n-8)/2:]) * 0x9e3779b97f4a7c15
	} else {
		for _, c := range b {
			h = h<<8 | uint64(c)
		}
	}
	return (h * 0xff51afd7ed558ccd) >> (64 - recentBits)
}

// internedName is an interned name and, for a function name, what
// KeepArgs said of it.
type internedName struct {
	s    string
	keep keepState
}

// keepState is KeepArgs' answer for a name, once asked.
type keepState uint8

const (
	keepUnasked keepState = iota
	keepNo
	keepYes
)

// intern returns a shared string equal to b. Neither the cache comparison
// nor the map lookup with a converted []byte key allocates.
func (s *Scanner) intern(b []byte) string { return s.internName(b, false).s }

// internName is intern, and with ask, KeepArgs' answer for the name:
// asked the first time the name is seen and kept with it, so that a
// dump's millions of frames ask it once per distinct function.
func (s *Scanner) internName(b []byte, ask bool) internedName {
	slot := &s.recent[recentSlot(b)]
	if v := *slot; v.s == string(b) && (!ask || v.keep != keepUnasked) {
		return v
	}
	v, ok := s.names[string(b)]
	if !ok {
		v.s = string(b)
	}
	stored := ok
	if ask && v.keep == keepUnasked {
		v.keep = keepNo
		if s.KeepArgs(v.s) {
			v.keep = keepYes
		}
		stored = false
	}
	// A real binary has some tens of thousands of functions; a dump
	// naming more is hostile, and is read without interning the rest so
	// that memory stays bounded.
	if !stored && (ok || len(s.names) < maxInterned) {
		s.names[v.s] = v
	}
	*slot = v
	return v
}

// maxInterned bounds the interned names.
const maxInterned = 1 << 18
