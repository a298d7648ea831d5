package watches

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

func TestCanonicalFunc(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch", "k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch"},
		{"k8s.io/kubernetes/vendor/k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch", "k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch"},
		{"k8s.io/kubernetes/vendor/golang.org/x/net/http2.(*serverConn).serve", "golang.org/x/net/http2.(*serverConn).serve"},
		{"github.com/k3s-io/k3s/forks/kubernetes/staging/src/k8s.io/apiserver/pkg/server/filters.(*priorityAndFairnessHandler).Handle", "k8s.io/apiserver/pkg/server/filters.(*priorityAndFairnessHandler).Handle"},
		// File paths: GOPATH builds and fork trees.
		{"/go/src/k8s.io/kubernetes/vendor/k8s.io/apiserver/pkg/storage/cacher/cacher.go", "k8s.io/apiserver/pkg/storage/cacher/cacher.go"},
		{"github.com/k3s-io/k3s/forks/kubernetes/staging/src/k8s.io/apiserver/pkg/storage/cacher/ready.go", "k8s.io/apiserver/pkg/storage/cacher/ready.go"},
		// A vendor tree inside a vendor tree: the innermost wins.
		{"a.io/x/vendor/b.io/y/vendor/c.io/z.F", "c.io/z.F"},
		// Unchanged: the main module, the standard library, a vendor word
		// that is not a directory, and the standard library's own vendor
		// tree (no leading element).
		{"k8s.io/kubernetes/pkg/controlplane.(*Instance).Run", "k8s.io/kubernetes/pkg/controlplane.(*Instance).Run"},
		{"runtime.gopark", "runtime.gopark"},
		{"net/http.(*http2serverConn).serve", "net/http.(*http2serverConn).serve"},
		{"example.com/vendors/x.F", "example.com/vendors/x.F"},
		{"vendor/golang.org/x/net/http2/hpack.(*Decoder).Write", "vendor/golang.org/x/net/http2/hpack.(*Decoder).Write"},
		{"", ""},
	} {
		if got := CanonicalFunc(tc.in); got != tc.want {
			t.Errorf("CanonicalFunc(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRoleOfOtherBuilds(t *testing.T) {
	for _, tc := range []struct {
		fn   string
		want bool
	}{
		{fnSendWatchCacheEvent, true},
		{"k8s.io/kubernetes/vendor/" + fnSendWatchCacheEvent, true},
		{"github.com/k3s-io/k3s/forks/kubernetes/staging/src/" + fnSendWatchCacheEvent, true},
		// A suffix that is not a build prefix is another package.
		{"example.com/fork/" + fnSendWatchCacheEvent, false},
		{"xk8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).sendWatchCacheEvent", false},
	} {
		if got := roleOf(tc.fn) == roleSend; got != tc.want {
			t.Errorf("roleOf(%q) is sendWatchCacheEvent's = %v, want %v", tc.fn, got, tc.want)
		}
	}
	got := []bool{
		IsAPIServerFrame(stacks.Frame{Func: "k8s.io/kubernetes/vendor/k8s.io/apiserver/pkg/server.(*GenericAPIServer).Run"}),
		IsAPIServerFrame(stacks.Frame{Func: "k8s.io/apiserver/pkg/server.(*GenericAPIServer).Run"}),
		IsAPIServerFrame(stacks.Frame{Func: "k8s.io/kubernetes/vendor/k8s.io/client-go/tools/cache.(*Reflector).Run"}),
	}
	if d := cmp.Diff([]bool{true, true, false}, got); d != "" {
		t.Errorf("IsAPIServerFrame (-want +got):\n%s", d)
	}
}
