package diagnosis

import (
	"fmt"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// releaseStep says plainly when a server's /version names a release newer
// than the newest this build was proven on (watches.CheckRelease): a note
// with the version and what was recognised. A release newer than every
// table the classifier has is also incomplete, so its run is never an
// all-clear: a watcher loop rewritten since (as v1.38 rewrote v1.37's)
// would read as no watcher at all. info is the server's, filled by the
// other steps.
func releaseStep(info api.APIServer) added {
	status, note := watches.CheckRelease(info.Version)
	if status == watches.ReleaseProven {
		return added{}
	}
	seen := "no goroutine dump or trace was read"
	if info.DumpFormat != "" {
		seen = fmt.Sprintf("recognised %d cacheWatcher goroutines, %d in the initial phase, in the %s evidence", info.Watchers, info.InitialPhase, info.DumpFormat)
	}
	out := added{notes: []string{note + "; " + seen}}
	if status == watches.ReleaseUnknown {
		out.incomplete = []string{fmt.Sprintf("%s: kube-apiserver %s is newer than any release this build knows the watcher frames of: \"no watch stuck\" is not proven for it (%s)", info.Name, info.Version, seen)}
	}
	return out
}
