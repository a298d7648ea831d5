package watches

import (
	"testing"

	"github.com/watch-doctor/watch-doctor/pkg/trace"
)

func TestCacheWaitFunc(t *testing.T) {
	tests := []struct {
		stack []string
		want  string
	}{
		{[]string{"runtime.gopark", fnReadyWaitGen, "k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch"}, "cacher.(*ready).waitAndReadGeneration"},
		{[]string{"k8s.io/kubernetes/vendor/" + fnWaitFreshLocked}, "cacher.(*watchCache).waitUntilFreshLocked"},
		{[]string{fnReadyWait}, "cacher.(*ready).wait"},
		{[]string{"runtime.gopark", "main.main"}, "the cacher"},
		{nil, "the cacher"},
	}
	for _, tt := range tests {
		var stack []trace.Frame
		for _, fn := range tt.stack {
			stack = append(stack, trace.Frame{Func: fn})
		}
		if got := CacheWaitFunc(stack); got != tt.want {
			t.Errorf("CacheWaitFunc(%q) = %q, want %q", tt.stack, got, tt.want)
		}
	}
}
