package watches

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// FuzzObjectType feeds argument text to the doEncode reader: it must never
// panic, and return either nothing or one certain hex word.
func FuzzObjectType(f *testing.F) {
	// Seeds: every doEncode argument text of the real captures.
	addRealArgs(f, regexp.MustCompile(`\(\*watchEncoder\)\.doEncode\((.*)\)\n`))
	f.Add("0x1, {0x2?, 0x3}, {{...}}")
	f.Add("{{{")
	f.Add("}, }, {")
	f.Fuzz(func(t *testing.T, args string) {
		got := objectType([]stacks.Frame{{Func: fnDoEncode, Args: args}})
		if got != "" && (!strings.HasPrefix(got, "0x") || strings.ContainsAny(got, "?,{} ")) {
			t.Fatalf("objectType(%q) = %q: want \"\" or one certain hex word", args, got)
		}
		for _, a := range splitArgs(args) {
			if a != strings.TrimSpace(a) {
				t.Fatalf("splitArgs(%q) kept spaces around %q", args, a)
			}
		}
	})
}

// addRealArgs seeds f with the first group of every match of re in the
// goroutine dumps of the real captures (seed-repro t1 and t2).
func addRealArgs(f *testing.F, re *regexp.Regexp) {
	for _, dir := range []string{"t1", "t2"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "seed-repro", dir, "goroutine-debug2.txt"))
		if err != nil {
			f.Fatal(err)
		}
		for _, m := range re.FindAllSubmatch(b, -1) {
			f.Add(string(m[1]))
		}
	}
}

func TestObjectTypeOnTheRealCapture(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "seed-repro", "t2", "goroutine-debug2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	d := collect(t, string(b))
	types := map[string]int{}
	for _, w := range d.Watchers {
		if w.Phase == api.PhaseInitial && w.Handler != nil {
			types[w.Handler.ObjectType+" "+w.Handler.Transport]++
		}
	}
	// Both initial-phase pod watches are blocked writing, over HTTP/2,
	// encoding the same pod type.
	if types["0x472a248 http2"] != 2 || len(types) != 1 {
		t.Errorf("initial-phase handlers by object type and transport = %v, want 2 x 0x472a248 http2", types)
	}
}
