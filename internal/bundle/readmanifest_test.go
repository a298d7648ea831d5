package bundle

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/watch-doctor/watch-doctor/internal/bounded"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// FuzzReadManifest: a manifest of any content is read or refused with an
// error, never a panic.
func FuzzReadManifest(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"watchdoctor/v1alpha1","kind":"WatchDoctorBundle","instances":[{"name":"10.0.0.1:6443","pinned":true,"samples":[{"dir":"10.0.0.1_6443/sample-1","capturedAt":"2026-11-29T10:24:32Z","fetches":[{"kind":"goroutine-debug2","path":"/debug/pprof/goroutine?debug=2","startedAt":"2026-11-29T10:24:32Z","duration":"1s","bytes":10}]}]}]}`))
	f.Add([]byte(`{"kind":"WatchDoctorBundle"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := ReadManifest(bytes.NewReader(in))
		if err == nil && (m.Kind != api.KindManifest || m.APIVersion != api.GroupVersion) {
			t.Fatalf("accepted a manifest of kind %q, apiVersion %q", m.Kind, m.APIVersion)
		}
	})
}

func TestReadManifest(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     string // the error, or "" for a manifest read
	}{
		{name: "ours", in: `{"apiVersion":"watchdoctor/v1alpha1","kind":"WatchDoctorBundle"}`},
		{name: "another kind", in: `{"apiVersion":"watchdoctor/v1alpha1","kind":"WatchDoctorReport"}`,
			want: `manifest kind "WatchDoctorReport", want "WatchDoctorBundle"`},
		{name: "another version", in: `{"apiVersion":"watchdoctor/v1","kind":"WatchDoctorBundle"}`,
			want: `manifest apiVersion "watchdoctor/v1", want "watchdoctor/v1alpha1"`},
		{name: "no kind", in: `{}`, want: `manifest kind "", want "WatchDoctorBundle"`},
		{name: "not json", in: `kind: WatchDoctorBundle`, want: "decoding manifest: invalid character 'k' looking for beginning of value"},
		{name: "cut", in: `{"apiVersion":"watchdoctor/v1alpha1",`, want: "decoding manifest: unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ReadManifest(strings.NewReader(tc.in))
			got := ""
			if err != nil {
				got = err.Error()
			} else if m.Kind != api.KindManifest {
				t.Errorf("kind %q", m.Kind)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadManifestIsBounded(t *testing.T) {
	t.Parallel()
	// Spaces are valid JSON before a value: only the bound stops them.
	r := io.MultiReader(strings.NewReader(strings.Repeat(" ", MaxManifestBytes+1)), strings.NewReader(`{}`))
	_, err := ReadManifest(r)
	var tl *bounded.TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("err = %v, want a bounded.TooLargeError", err)
	}
}
