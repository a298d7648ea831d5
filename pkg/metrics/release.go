package metrics

import (
	"fmt"
	"strconv"
	"strings"
)

// Release is a Kubernetes minor release, such as 1.33. The zero Release means
// "unknown".
type Release struct {
	Major, Minor int
}

// String formats r as "v1.33", or "unknown" for the zero Release.
func (r Release) String() string {
	if r.IsZero() {
		return "unknown"
	}
	return fmt.Sprintf("v%d.%d", r.Major, r.Minor)
}

// IsZero reports whether r is the zero (unknown) Release.
func (r Release) IsZero() bool { return r == Release{} }

// Compare returns -1, 0 or +1 as r is older than, the same as, or newer than o.
func (r Release) Compare(o Release) int {
	switch {
	case r.Major != o.Major:
		if r.Major < o.Major {
			return -1
		}
		return 1
	case r.Minor < o.Minor:
		return -1
	case r.Minor > o.Minor:
		return 1
	}
	return 0
}

// ParseRelease reads "1.33", "v1.33", "v1.33.2" or a build string such as
// "v1.33.2-eks-1a2b3c" (the patch and anything after it are ignored).
func ParseRelease(s string) (Release, error) {
	orig := s
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	parts := strings.SplitN(s, ".", 3)
	if len(parts) < 2 {
		return Release{}, fmt.Errorf("invalid Kubernetes version %q: want MAJOR.MINOR, like 1.33 or v1.33.2", orig)
	}
	major, err := strconv.Atoi(parts[0])
	if err != nil || major < 1 || major > 9 {
		return Release{}, fmt.Errorf("invalid Kubernetes version %q: major %q is not a small number", orig, parts[0])
	}
	minorText := parts[1]
	// "1.33+" (some managed clusters report minor "33+").
	if i := strings.IndexFunc(minorText, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minorText = minorText[:i]
	}
	minor, err := strconv.Atoi(minorText)
	if err != nil || minor < 0 || minor > 999 {
		return Release{}, fmt.Errorf("invalid Kubernetes version %q: minor %q is not a small number", orig, parts[1])
	}
	return Release{Major: major, Minor: minor}, nil
}

// ReleaseInfo names a release the catalog covers and the k8s.io/apiserver
// module version its metric names and labels were read from.
type ReleaseInfo struct {
	Release
	// ReadFrom is the k8s.io/apiserver module version (the latest patch of the
	// minor the Go module proxy served when the catalog was written).
	ReadFrom string
}

// releases are the releases the catalog was read from, oldest first.
var releases = []ReleaseInfo{
	{Release{1, 30}, "v0.30.14"},
	{Release{1, 31}, "v0.31.14"},
	{Release{1, 32}, "v0.32.13"},
	{Release{1, 33}, "v0.33.13"},
	{Release{1, 34}, "v0.34.13"},
	{Release{1, 35}, "v0.35.10"},
	{Release{1, 36}, "v0.36.6"},
	{Release{1, 37}, "v0.37.2"},
}

// Releases lists the releases the catalog covers, oldest first.
func Releases() []ReleaseInfo { return append([]ReleaseInfo(nil), releases...) }

// OldestRelease and NewestRelease bound the catalog.
func OldestRelease() Release { return releases[0].Release }

// NewestRelease is the newest release the catalog was read from.
func NewestRelease() Release { return releases[len(releases)-1].Release }
