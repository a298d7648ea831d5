package bundle

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/watch-doctor/watch-doctor/internal/bounded"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// ManifestName is the manifest file collect writes at a bundle's root.
const ManifestName = "manifest.json"

// ReadManifest decodes a manifest, rejecting unknown kinds and versions.
func ReadManifest(r io.Reader) (*api.Manifest, error) {
	var m api.Manifest
	br := bounded.NewReader(r, MaxManifestBytes, "the manifest", "a manifest")
	if err := json.NewDecoder(br).Decode(&m); err != nil {
		if tl := br.Exceeded(); tl != nil {
			return nil, tl
		}
		return nil, fmt.Errorf("decoding manifest: %w", err)
	}
	if m.Kind != api.KindManifest {
		return nil, fmt.Errorf("manifest kind %q, want %q", m.Kind, api.KindManifest)
	}
	if m.APIVersion != api.GroupVersion {
		return nil, fmt.Errorf("manifest apiVersion %q, want %q", m.APIVersion, api.GroupVersion)
	}
	return &m, nil
}
