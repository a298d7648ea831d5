package diagnosis

import "testing"

// The words the caller gives are woven into the sentences; without them
// the sentences name only what needs no command line.
func TestWords(t *testing.T) {
	cli := Words{Resample: "diagnose --interval 3m30s", CapturedAt: "--captured-at"}
	for _, tc := range []struct{ got, want string }{
		{cli.resample(), "diagnose --interval 3m30s, or two captures that far apart"},
		{Words{}.resample(), "two captures that far apart"},
		{cli.captureTime(), "captured-at.txt or --captured-at"},
		{Words{}.captureTime(), "captured-at.txt"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
