package watches

import (
	"strings"
	"testing"
)

func TestCheckRelease(t *testing.T) {
	for _, tc := range []struct {
		version string
		want    ReleaseStatus
		says    []string
	}{
		{"v1.37.2", ReleaseProven, nil},
		{"v1.37.9", ReleaseProven, nil},
		{"v1.34.4", ReleaseProven, nil},
		{"v1.20.0", ReleaseProven, nil},
		{"", ReleaseProven, nil},
		{"not a version", ReleaseProven, nil},
		{"v1.38.0-beta.0", ReleaseProven, nil},
		{"v1.38.1", ReleaseProven, nil},
		{"v1.39.0", ReleaseUnknown, []string{"v1.39.0 is newer than v1.38.0-beta.0, the newest release whose watcher frames this build knows and was proven on", "would not be recognised"}},
		{"v2.0.0", ReleaseUnknown, []string{"v2.0.0 is newer"}},
	} {
		got, note := CheckRelease(tc.version)
		if got != tc.want {
			t.Errorf("CheckRelease(%q) = %v, want %v", tc.version, got, tc.want)
		}
		if (note == "") != (len(tc.says) == 0) {
			t.Errorf("CheckRelease(%q) note = %q, want one saying %q", tc.version, note, tc.says)
		}
		for _, s := range tc.says {
			if !strings.Contains(note, s) {
				t.Errorf("CheckRelease(%q) note = %q, want it to say %q", tc.version, note, s)
			}
		}
	}
}

// TestCheckReleaseKnownFromSource: a newest table not proven on a capture
// (as v1.38's was before one was shipped) gives a note naming the source.
func TestCheckReleaseKnownFromSource(t *testing.T) {
	rels := append([]release(nil), releases...)
	rels[len(rels)-1].Proven = false
	for _, tc := range []struct {
		version string
		want    ReleaseStatus
		says    string
	}{
		{"v1.37.2", ReleaseProven, ""},
		{"v1.38.0-beta.0", ReleaseKnown, "kube-apiserver v1.38.0-beta.0 is newer than v1.37.2, the newest release this build was proven on with a real capture: its watcher frames were read by the table of v1.38.0-beta.0, taken from k8s.io/apiserver v0.38.0-beta.0's source, not from a capture"},
		{"v1.39.0", ReleaseUnknown, "kube-apiserver v1.39.0 is newer than v1.38.0-beta.0, the newest release whose watcher frames this build knows (v1.37.2 is the newest proven on a real capture): its goroutines were read with v1.38.0-beta.0's frames, and a watcher loop changed since would not be recognised"},
	} {
		got, note := checkRelease(tc.version, rels)
		if got != tc.want || note != tc.says {
			t.Errorf("checkRelease(%q) = %v, %q; want %v, %q", tc.version, got, note, tc.want, tc.says)
		}
	}
}
