package metrics

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseRelease(t *testing.T) {
	tests := []struct {
		in      string
		want    Release
		wantErr string
	}{
		{in: "1.33", want: Release{1, 33}},
		{in: "v1.37.2", want: Release{1, 37}},
		{in: "v1.30.14-eks-1a2b3c", want: Release{1, 30}},
		{in: "1.31+", want: Release{1, 31}},
		{in: "", wantErr: `invalid Kubernetes version "": want MAJOR.MINOR, like 1.33 or v1.33.2`},
		{in: "v1", wantErr: `invalid Kubernetes version "v1": want MAJOR.MINOR, like 1.33 or v1.33.2`},
		{in: "x.33", wantErr: `invalid Kubernetes version "x.33": major "x" is not a small number`},
		{in: "1.y", wantErr: `invalid Kubernetes version "1.y": minor "y" is not a small number`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseRelease(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ParseRelease(%q) error = %v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ParseRelease(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestReleaseCompareAndString(t *testing.T) {
	for _, tc := range []struct {
		a, b Release
		want int
	}{
		{Release{1, 33}, Release{1, 33}, 0},
		{Release{1, 9}, Release{1, 33}, -1},
		{Release{1, 34}, Release{1, 33}, 1},
		{Release{2, 0}, Release{1, 99}, 1},
		{Release{1, 99}, Release{2, 0}, -1},
		{Release{}, Release{1, 30}, -1},
	} {
		if got := tc.a.Compare(tc.b); got != tc.want {
			t.Errorf("%s.Compare(%s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	for r, want := range map[Release]string{{}: "unknown", {1, 37}: "v1.37", {2, 0}: "v2.0"} {
		if got := r.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
		if r.IsZero() != (want == "unknown") {
			t.Errorf("%s.IsZero() = %v", r, r.IsZero())
		}
	}
}

// TestReleasesAreOrdered: the catalog's releases are consecutive, oldest
// first, each read from the k8s.io/apiserver module of its minor, and
// Releases returns a copy.
func TestReleasesAreOrdered(t *testing.T) {
	rs := Releases()
	if OldestRelease() != rs[0].Release || NewestRelease() != rs[len(rs)-1].Release {
		t.Errorf("oldest %s, newest %s; releases %v", OldestRelease(), NewestRelease(), rs)
	}
	for i, r := range rs {
		if i > 0 && r.Release != (Release{1, rs[i-1].Minor + 1}) {
			t.Errorf("release %d is %s after %s", i, r.Release, rs[i-1].Release)
		}
		if want := fmt.Sprintf("v0.%d.", r.Minor); !strings.HasPrefix(r.ReadFrom, want) {
			t.Errorf("%s read from %q, want k8s.io/apiserver %s*", r.Release, r.ReadFrom, want)
		}
	}
	rs[0].Minor = 0
	if Releases()[0].Minor == 0 {
		t.Error("Releases returned the catalog's slice, not a copy")
	}
}
