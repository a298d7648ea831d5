package replay

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuiltinsParseAndRoundTrip(t *testing.T) {
	names := BuiltinNames()
	want := []string{"client-stacks", "half-window-client", "issue-131721", "issue-137631", "quiet-and-busy", "slow-but-progressing", "slow-client-busy-resource", "streaming-stall"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatalf("built-ins (-want +got):\n%s", diff)
	}
	for _, n := range names {
		sc, err := Builtin(n)
		if err != nil {
			t.Fatal(err)
		}
		b, err := sc.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(strings.NewReader(string(b)))
		if err != nil {
			t.Fatalf("%s: marshalled scenario does not parse: %v\n%s", n, err, b)
		}
		if diff := cmp.Diff(sc, again); diff != "" {
			t.Errorf("%s: round trip (-want +got):\n%s", n, diff)
		}
	}
	if _, err := Builtin("nope"); err == nil || !strings.Contains(err.Error(), `unknown scenario "nope": use one of client-stacks, half-window-client,`) {
		t.Errorf("unknown built-in: %v", err)
	}
}

func TestBuiltinSource(t *testing.T) {
	for _, n := range BuiltinNames() {
		src, err := BuiltinSource(n)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(src, []byte("\nname: "+n+"\n")) {
			t.Errorf("the source of %q does not name it", n)
		}
	}
	if _, err := BuiltinSource("nope"); err == nil || !strings.HasPrefix(err.Error(), `unknown scenario "nope": use one of client-stacks, `) {
		t.Errorf("BuiltinSource(nope): %v", err)
	}
}
