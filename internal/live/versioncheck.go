package live

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/watch-doctor/watch-doctor/pkg/metrics"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// apiserverModule finds the k8s.io/apiserver module version in a frame's
// file path (k8s.io/apiserver@v0.37.2/pkg/...): v0.N is Kubernetes v1.N.
var apiserverModule = regexp.MustCompile(`k8s\.io/apiserver@v0\.([0-9]+)\.[0-9]+`)

// versionWitness is one source's claim of the server's release.
type versionWitness struct {
	source string // "/version", "kubernetes_build_info", "the goroutine frames"
	text   string // what it says, as it says it
	rel    metrics.Release
}

// versionContradiction compares what /version says (gitVersion) with what
// kubernetes_build_info and the k8s.io/apiserver frames of the debug=1
// profile say, at the minor release: a /version saying v1.20.0 of a
// v1.37.2 server (a proxy answering for it, a doctored server) would set
// which release rules apply. It returns "" when they agree or when fewer
// than two of them are known.
func versionContradiction(gitVersion, buildInfo string, profile *stacks.Aggregated) string {
	var ws []versionWitness
	add := func(source, text string) {
		if r, err := metrics.ParseRelease(text); err == nil && text != "" {
			ws = append(ws, versionWitness{source, text, r})
		}
	}
	add("/version", gitVersion)
	add("kubernetes_build_info", buildInfo)
	if m := frameRelease(profile); m != "" {
		add("the goroutine profile's k8s.io/apiserver module", m)
	}
	if len(ws) < 2 {
		return ""
	}
	var others []string
	for _, w := range ws[1:] {
		if w.rel.Compare(ws[0].rel) != 0 {
			others = append(others, fmt.Sprintf("%s says %s", w.source, w.text))
		}
	}
	if len(others) == 0 {
		return ""
	}
	return fmt.Sprintf("the versions contradict each other: %s says %s, but %s; the report goes by /version, so check which server answered (a proxy or a second server behind the address?)", ws[0].source, ws[0].text, strings.Join(others, " and "))
}

// frameRelease is the release of the first k8s.io/apiserver frame with a
// module version ("v1.37"), "" when none has one (a vendored or forked
// build).
func frameRelease(a *stacks.Aggregated) string {
	if a == nil {
		return ""
	}
	for _, st := range a.Stacks {
		for _, f := range st.Frames {
			if m := apiserverModule.FindStringSubmatch(f.File); m != nil {
				if n, err := strconv.Atoi(m[1]); err == nil {
					return fmt.Sprintf("v1.%d", n)
				}
			}
		}
	}
	return ""
}
