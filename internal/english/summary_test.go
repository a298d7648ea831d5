package english

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWarningsAreSummarisedAfterAFewOfAKind(t *testing.T) {
	var s Summary
	s.Add("other", "first note")
	for i := 1; i <= 100000; i++ {
		s.Add("stray", fmt.Sprintf("skipped f%d: unrecognized content", i))
		if i == 2 {
			s.Add("other", "second note")
		}
	}
	want := []string{
		"first note",
		"skipped f1: unrecognized content",
		"skipped f2: unrecognized content",
		"second note",
		"skipped f3: unrecognized content",
		"and 99997 more like it",
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

func TestSummarize(t *testing.T) {
	lines := []string{"a 1", "b", "a 2", "a 3", "a 4", "a 5"}
	got := Summarize(lines, func(l string) string { return strings.Fields(l)[0] })
	want := []string{"a 1", "b", "a 2", "a 3", "and 2 more like it"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Summarize (-want +got):\n%s", diff)
	}
}
