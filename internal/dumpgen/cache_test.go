package dumpgen_test

import (
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
)

// TestCachedIsMadeOnce: the same config gives the same dump, made once
// and shared; a config Generate refuses is an error, never cached.
func TestCachedIsMadeOnce(t *testing.T) {
	cfg := dumpgen.Config{Goroutines: 200, Stuck: 2}
	a, res, err := dumpgen.Cached(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, res2, err := dumpgen.Cached(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) == 0 || &a[0] != &b[0] || len(a) != len(b) {
		t.Errorf("two calls made two dumps (%d and %d bytes)", len(a), len(b))
	}
	if len(res.Planted) != 2 || len(res2.Planted) != 2 {
		t.Errorf("planted %d and %d, want 2", len(res.Planted), len(res2.Planted))
	}
	if s := repo(t); s != repo(t) {
		t.Error("Repo loaded the templates twice")
	}
	for range 2 {
		if _, _, err := dumpgen.Cached(dumpgen.Config{Goroutines: 7, Stuck: 2}); err == nil {
			t.Error("Cached of 2 stuck watches in 7 goroutines succeeded")
		}
	}
}
