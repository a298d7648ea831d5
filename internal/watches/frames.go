package watches

import (
	"strings"
	"sync/atomic"

	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// buildPrefixEnds mark where another build's copy of a package path ends
// and the upstream import path begins:
//   - "/vendor/": a GOPATH build of kube-apiserver names its dependencies
//     "k8s.io/kubernetes/vendor/k8s.io/apiserver/...", both in function
//     names and file paths (cmd/go vendor directories, GOPATH mode);
//   - "/staging/src/": forks that build from a copy of the Kubernetes tree
//     ("github.com/k3s-io/k3s/forks/kubernetes/staging/src/k8s.io/apiserver/...",
//     and the tree's own staging/src/k8s.io/... directories).
var buildPrefixEnds = [...]string{"/vendor/", "/staging/src/"}

// canonicalCalls counts CanonicalFunc's calls, for the tests that check
// it runs once per distinct name, not once per frame
// (TestReadDumpCanonicalisesOncePerName).
var canonicalCalls atomic.Int64

// CanonicalFunc returns a function name or file path of a frame as a
// module build of upstream prints it: the vendor or staging-tree prefix of
// another build is cut, so "k8s.io/kubernetes/vendor/k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch"
// becomes "k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch". Names
// without such a prefix are returned as they are. It never allocates.
//
// It is the one normalisation of frame paths: the classifier (names.go,
// once per distinct name), ReadDump and the loaders' kube-apiserver
// detection (IsAPIServerFrame) all go through it.
func CanonicalFunc(fn string) string {
	canonicalCalls.Add(1)
	// Only the package path can hold the prefix: the part up to the last
	// '/' (a receiver or closure name holds none).
	slash := strings.LastIndexByte(fn, '/')
	if slash < 0 {
		return fn
	}
	head, cut := fn[:slash+1], -1
	for _, p := range buildPrefixEnds {
		// strings.Index is vectorised and LastIndex is not: most names
		// hold no prefix, and cost only the first.
		if !strings.Contains(head, p) {
			continue
		}
		if i := strings.LastIndex(head, p); i+len(p) > cut {
			cut = i + len(p)
		}
	}
	if cut < 0 {
		return fn
	}
	return fn[cut:]
}

// apiServerPrefix starts every function of k8s.io/apiserver, which every
// kube-apiserver goroutine dump holds (its handlers, the watch cache, APF).
const apiServerPrefix = "k8s.io/apiserver/"

// IsAPIServerFrame reports whether f runs k8s.io/apiserver code, in a
// module build or a vendored or forked one.
func IsAPIServerFrame(f stacks.Frame) bool {
	return strings.HasPrefix(CanonicalFunc(f.Func), apiServerPrefix)
}

// hasAPIServerFrame reports whether frames run k8s.io/apiserver code,
// which every kube-apiserver goroutine dump holds (its handlers, the
// watch cache, APF), vendored and forked builds included.
func hasAPIServerFrame(frames []stacks.Frame) bool {
	for _, f := range frames {
		if IsAPIServerFrame(f) {
			return true
		}
	}
	return false
}
