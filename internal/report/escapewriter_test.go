package report

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEscapeWriter: a progress line a server chose reaches the terminal
// escaped, its newline kept, and the writer reports the bytes it was given.
func TestEscapeWriter(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"sample 1/2: 10.0.0.1:6443: done\n", "sample 1/2: 10.0.0.1:6443: done\n"},
		{"server says \x1b[2Jgone\n", `server says \x1b[2Jgone` + "\n"},
		{"reason: \u202eexe\n", `reason: \u202eexe` + "\n"},
	} {
		var b bytes.Buffer
		n, err := EscapeWriter(&b).Write([]byte(tc.in))
		if err != nil || n != len(tc.in) {
			t.Errorf("Write(%q) = %d, %v; want %d, nil", tc.in, n, err, len(tc.in))
		}
		if diff := cmp.Diff(tc.want, b.String()); diff != "" {
			t.Errorf("Write(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestEscapeWriterPassesErrors(t *testing.T) {
	for _, in := range []string{"plain\n", "esc \x1b\n"} {
		if _, err := fmt.Fprint(EscapeWriter(failWriter{}), in); err == nil || err.Error() != "disk full" {
			t.Errorf("Write(%q) err = %v, want the writer's", in, err)
		}
	}
}
