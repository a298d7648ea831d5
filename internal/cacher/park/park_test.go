package park

import (
	"sync"
	"testing"
	"time"
)

func TestSpot(t *testing.T) {
	var s Spot[int]
	v, ok := s.Read()
	if !ok || v.Kind != Running || v.Deadline != 0 || v.Target != nil {
		t.Fatalf("zero Spot reads %+v, %v; want Running with nothing else", v, ok)
	}
	at := time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC)
	target := 7
	s.Set(Kind(3), at, &target)
	v, ok = s.Read()
	if !ok || v.Kind != 3 || v.Target != &target || v.Deadline != at.UnixNano() {
		t.Fatalf("read %+v, %v after Set", v, ok)
	}
	if v.Due(at.Add(-time.Nanosecond)) || !v.Due(at) {
		t.Error("Due: want false before the deadline, true at it")
	}
	if !s.Unchanged(v) {
		t.Error("Unchanged after no write")
	}
	s.Set(Running, time.Time{}, nil)
	if s.Unchanged(v) {
		t.Error("Unchanged after a write")
	}
	if v, _ := s.Read(); v.Due(at) {
		t.Error("a wait without deadline is never due")
	}
}

// TestSpotConsistentUnderRace: a reader never sees the kind of one Set
// with the deadline of another.
func TestSpotConsistentUnderRace(t *testing.T) {
	var s Spot[struct{}]
	base := time.Unix(0, 0)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; i <= 20000; i++ {
			s.Set(Kind(i%7), base.Add(time.Duration(i%7)*time.Second), nil)
		}
	}()
	for i := 0; i < 20000; i++ {
		if v, ok := s.Read(); ok && v.Kind != Running && v.Deadline != base.Add(time.Duration(v.Kind)*time.Second).UnixNano() {
			t.Fatalf("inconsistent read: %+v", v)
		}
	}
	wg.Wait()
}

// TestReadDuringAWrite: a read while a write is in progress (the sequence
// odd) is refused, whatever the fields hold; TestSpotConsistentUnderRace
// reaches this only when the scheduler interleaves so.
func TestReadDuringAWrite(t *testing.T) {
	var s Spot[struct{}]
	s.Set(Kind(3), time.Unix(5, 0), nil)
	s.seq.Add(1) // a writer between its two increments
	if v, ok := s.Read(); ok || v.Kind != Running {
		t.Errorf("Read during a write = %+v, %v; want the zero view and false", v, ok)
	}
	s.seq.Add(1)
	if v, ok := s.Read(); !ok || v.Kind != Kind(3) {
		t.Errorf("Read after the write = %+v, %v; want kind 3 and true", v, ok)
	}
}
