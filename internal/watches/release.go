package watches

import (
	"fmt"

	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// ReleaseStatus is what this build knows of a kube-apiserver release.
type ReleaseStatus int

const (
	// ReleaseProven: a real capture of the release (its minor) is
	// diagnosed in make test; and a version that cannot be read, or an
	// older release than any table, which is read as the oldest.
	ReleaseProven ReleaseStatus = iota
	// ReleaseKnown: newer than every proven release, its frames known
	// from its k8s.io/apiserver source alone (a table of shapes.go).
	ReleaseKnown
	// ReleaseUnknown: newer than every table: its goroutines are read with
	// the newest table's frames, and a watcher loop that changed since is
	// not recognised.
	ReleaseUnknown
)

// CheckRelease says what this build knows of version (a /version
// gitVersion, "v1.38.0-beta.0"), at the minor release, with a sentence
// saying so when it is not proven ("" for ReleaseProven).
func CheckRelease(version string) (ReleaseStatus, string) {
	return checkRelease(version, releases)
}

// checkRelease is CheckRelease against the tables rels, oldest first.
func checkRelease(version string, rels []release) (ReleaseStatus, string) {
	v, err := metrics.ParseRelease(version)
	if err != nil || version == "" {
		return ReleaseProven, ""
	}
	proven, known := newestProven(rels), rels[len(rels)-1]
	pr, _ := metrics.ParseRelease(proven.Kube)
	kr, _ := metrics.ParseRelease(known.Kube)
	switch {
	case v.Compare(kr) > 0 && known.Kube == proven.Kube:
		return ReleaseUnknown, fmt.Sprintf("kube-apiserver %s is newer than %s, the newest release whose watcher frames this build knows and was proven on: its goroutines were read with %s's frames, and a watcher loop changed since would not be recognised",
			version, known.Kube, known.Kube)
	case v.Compare(kr) > 0:
		return ReleaseUnknown, fmt.Sprintf("kube-apiserver %s is newer than %s, the newest release whose watcher frames this build knows (%s is the newest proven on a real capture): its goroutines were read with %s's frames, and a watcher loop changed since would not be recognised",
			version, known.Kube, proven.Kube, known.Kube)
	case v.Compare(pr) > 0:
		return ReleaseKnown, fmt.Sprintf("kube-apiserver %s is newer than %s, the newest release this build was proven on with a real capture: its watcher frames were read by the table of %s, taken from k8s.io/apiserver %s's source, not from a capture",
			version, proven.Kube, known.Kube, known.APIServer)
	}
	return ReleaseProven, ""
}
