package bundle

import (
	"io"

	"github.com/watch-doctor/watch-doctor/internal/bounded"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// MaxFileBytes is the most an input of kind may hold, counted after
// decompression; a larger one is an error naming it (bounded.TooLargeError),
// never a silent cut. The bounds sit near real sizes, with room
// (docs/bundle.md, Bounds):
//   - a debug=2 dump: the runtime cuts one at 64 MiB (stacks.MaxDumpBytes);
//     twice that leaves room for a traceback saved from a crash log;
//   - debug=1 and protobuf dumps aggregate stacks: stacks.MaxProfileBytes;
//   - APF dumps: a row is ~300 B, 10,000 watches make 3 MiB;
//   - /metrics: about 2 MiB on a real server, 20 MiB on the largest seen;
//   - /version ~400 B; captured-at.txt one RFC 3339 line; the manifest
//     ~1 KiB per fetch.
func MaxFileBytes(k api.FileKind) int64 {
	switch k {
	case api.FileGoroutineDebug2:
		return 2 * stacks.MaxDumpBytes
	case api.FileGoroutineDebug1, api.FileGoroutineProfile:
		return stacks.MaxProfileBytes
	case api.FileAPFRequests:
		return 32 << 20
	case api.FileAPFLevels:
		return 1 << 20
	case api.FileMetrics:
		return 64 << 20
	case api.FileVersion:
		return 64 << 10
	case api.FileCapturedAt:
		return 256
	case api.FileManifest:
		return MaxManifestBytes
	case api.FileTrace:
		return 256 << 20
	}
	return 1 << 20
}

// MaxManifestBytes bounds manifest.json: about 1 KiB per fetch, so room
// for thousands of instances.
const MaxManifestBytes = 16 << 20

// boundedRead returns r bounded for an input of kind, named name.
func boundedRead(r io.Reader, kind api.FileKind, name string) *bounded.Reader {
	return bounded.NewReader(r, MaxFileBytes(kind), name, "a "+string(kind)+" file")
}
