package dumpgen

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const watcherBlock = `goroutine 812 [select, 3 minutes]:
k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).sendWatchCacheEvent(0x1, 0x2)
	k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go:417 +0x3a5
k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInterval(0x1)
	k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go:527 +0x1f8
created by k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch in goroutine 811
	k8s.io/apiserver/pkg/storage/cacher/cacher.go:650 +0x10f0`

func TestBlockFields(t *testing.T) {
	b := []byte(watcherBlock)
	if !isInitialWatcher(b) {
		t.Error("isInitialWatcher = false for a watcher in processInterval")
	}
	if isInitialWatcher([]byte(strings.Replace(watcherBlock, "processInterval", "process", 1))) {
		t.Error("isInitialWatcher = true for a streaming watcher")
	}
	if got := parentID(b); got != 811 {
		t.Errorf("parentID = %d, want 811", got)
	}
	if got := parentID([]byte("goroutine 1 [running]:\nmain.main()")); got != 0 {
		t.Errorf("parentID without a creator = %d, want 0", got)
	}
	if got := headerWait(b); got != 3 {
		t.Errorf("headerWait = %d, want 3", got)
	}
	if got := headerWait([]byte("goroutine 1 [select]:")); got != 0 {
		t.Errorf("headerWait without a wait = %d, want 0", got)
	}
}

func TestLeadingInt(t *testing.T) {
	tests := []struct {
		in   string
		v    int64
		n    int
		ok   bool
		name string
	}{
		{name: "digits then text", in: "812 [select]", v: 812, n: 3, ok: true},
		{name: "no digits", in: "x1", n: 0},
		{name: "too many digits", in: "1234567890123456789", n: 19},
	}
	for _, tt := range tests {
		v, n, ok := leadingInt([]byte(tt.in))
		if v != tt.v || n != tt.n || ok != tt.ok {
			t.Errorf("%s: leadingInt(%q) = %d, %d, %v; want %d, %d, %v", tt.name, tt.in, v, n, ok, tt.v, tt.n, tt.ok)
		}
	}
}

// TestSplitBlock checks that a block is cut at its own id and the ids it
// names, and that putting the parts and ids back together gives it again.
func TestSplitBlock(t *testing.T) {
	text := watcherBlock + "\n[originating from goroutine 7]:\nmain.f()"
	bl := splitBlock([]byte(text))
	if diff := cmp.Diff([]int64{812, 811, 7}, bl.ids); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	for i, p := range bl.parts {
		buf.Write(p)
		if i < len(bl.ids) {
			buf.WriteString([]string{"812", "811", "7"}[i])
		}
	}
	if buf.String() != text {
		t.Errorf("parts and ids put back together:\n%s\nwant:\n%s", buf.String(), text)
	}
	if bl.size != len(text)+2 {
		t.Errorf("size = %d, want %d (the block and its blank line)", bl.size, len(text)+2)
	}
}

func TestLoadNeedsATemplate(t *testing.T) {
	if _, err := Load(); err == nil || err.Error() != "dumpgen: no template dumps given" {
		t.Errorf("Load() error = %v, want %q", err, "dumpgen: no template dumps given")
	}
}
