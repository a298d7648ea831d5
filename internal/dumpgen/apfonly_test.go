package dumpgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWriteAPFOnlyCaptures: two samples 90 s apart of one process,
// without a goroutine dump, each listing the same n executing watches.
func TestWriteAPFOnlyCaptures(t *testing.T) {
	dirs, err := WriteAPFOnlyCaptures(t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != 2 {
		t.Fatalf("got %d captures, want 2", len(dirs))
	}
	var at [2]time.Time
	var requests [2]string
	for i, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if got, want := strings.Join(names, ","), "apf-requests.txt,captured-at.txt,metrics.txt"; got != want {
			t.Errorf("%s holds %s, want %s (no goroutine dump)", d, got, want)
		}
		b, err := os.ReadFile(filepath.Join(d, "captured-at.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if at[i], err = time.Parse(time.RFC3339, strings.TrimSpace(string(b))); err != nil {
			t.Fatal(err)
		}
		b, err = os.ReadFile(filepath.Join(d, "apf-requests.txt"))
		if err != nil {
			t.Fatal(err)
		}
		requests[i] = string(b)
		if n := strings.Count(requests[i], ", watch, "); n != 3 {
			t.Errorf("%s lists %d watches, want 3", d, n)
		}
	}
	if gap := at[1].Sub(at[0]); gap != 90*time.Second {
		t.Errorf("captures %v apart, want 90s", gap)
	}
	if requests[0] != requests[1] {
		t.Error("the two samples list different requests, want the same watches in both")
	}
}
