package upstream

import "testing"

// The writes are tested by upstream's storage suite (memstore_test.go:
// deletes and guaranteed updates with suggestions, preconditions and
// conflicts); this pins commitLocked, the compare-and-swap all of them end
// in.
func TestCommitLocked(t *testing.T) {
	s := newMemStoreForTests()
	s.mu.Lock()
	defer s.mu.Unlock()
	steps := []struct {
		what   string
		expect int64
		data   []byte
		ok     bool
	}{
		{what: "create where nothing is", expect: 0, data: []byte("v1"), ok: true},
		{what: "create again", expect: 0, data: []byte("v1"), ok: false},
		{what: "update at a stale revision", expect: 1, data: []byte("v2"), ok: false},
		{what: "update at the current revision", expect: -1, data: []byte("v2"), ok: true},
		{what: "delete at the current revision", expect: -1, ok: true},
		{what: "delete what is gone", expect: -1, ok: false},
	}
	var last int64
	for _, st := range steps {
		expect := st.expect
		if expect < 0 {
			expect = last
		}
		rev, ok := s.commitLocked("/pods/ns/a", expect, st.data)
		if ok != st.ok {
			t.Fatalf("%s: ok = %v, want %v", st.what, ok, st.ok)
		}
		if !ok {
			continue
		}
		if rev <= last {
			t.Errorf("%s: revision %d, want one after %d", st.what, rev, last)
		}
		if kv := s.kvs["/pods/ns/a"]; (st.data == nil) != (kv == nil) {
			t.Errorf("%s: key present = %v, want %v", st.what, kv != nil, st.data != nil)
		}
		last = rev
	}
}
