package watches

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTallyCountsByContent(t *testing.T) {
	var tl tally
	select1 := "select"
	select2 := strings.Clone(select1) // another address, the same key
	long := "chan receive (nil chan)"
	short := long[:len("chan receive")] // the same address, shorter
	for _, k := range []string{select1, select2, long, short, select1, "", "", short} {
		tl.add(k)
	}
	want := map[string]int{"select": 3, "chan receive (nil chan)": 1, "chan receive": 2, "": 2}
	if diff := cmp.Diff(want, tl.snapshot()); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}

func TestTallyIsBounded(t *testing.T) {
	tl := tally{max: 3}
	for i := range 5 {
		tl.add(strconv.Itoa(i))
	}
	tl.add("0")
	tl.add(strings.Clone("4"))
	want := map[string]int{"0": 2, "1": 1, "2": 1}
	if diff := cmp.Diff(want, tl.snapshot()); diff != "" {
		t.Errorf("counts past the bound (-want +got):\n%s", diff)
	}
}
