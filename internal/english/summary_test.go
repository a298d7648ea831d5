package english

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWarningsAreSummarisedAfterAFewOfAKind(t *testing.T) {
	var s Summary
	s.Add("other", "notes", "first note")
	for i := 1; i <= 100000; i++ {
		s.Add("stray", "skipped files", fmt.Sprintf("skipped f%d: unrecognized content", i))
		if i == 2 {
			s.Add("other", "notes", "second note")
		}
	}
	want := []string{
		"first note",
		"skipped f1: unrecognized content",
		"skipped f2: unrecognized content",
		"second note",
		"skipped f3: unrecognized content",
		"and 99997 more like it (skipped files)",
	}
	if diff := cmp.Diff(want, s.Lines()); diff != "" {
		t.Errorf("Lines (-want +got):\n%s", diff)
	}
	if s.Len() != 100002 {
		t.Errorf("Len = %d, want 100002", s.Len())
	}
	var empty Summary
	if got := empty.Lines(); len(got) != 0 {
		t.Errorf("empty summary: %q", got)
	}
}
