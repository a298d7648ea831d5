package trace

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// timeoutReader yields its text, then fails as a read past a deadline.
type timeoutReader struct{ r io.Reader }

var errDeadline = errors.New("timed out while reading the response")

func (t *timeoutReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if errors.Is(err, io.EOF) {
		return n, errDeadline
	}
	return n, err
}

// TestAnErrorNamesWhatHappenedATimeoutInTheHeader: a stream that fails
// while its 16-byte header is read is reported with that failure, not as
// a stream that is no Go 1.22+ trace.
func TestAnErrorNamesWhatHappenedATimeoutInTheHeader(t *testing.T) {
	_, err := Read(&timeoutReader{strings.NewReader("go 1.2")}, Options{Source: "api/trace"})
	var ve *VersionError
	if !errors.Is(err, errDeadline) || errors.As(err, &ve) {
		t.Fatalf("err = %v, want the timeout, not a *VersionError", err)
	}
	if want := `execution trace "api/trace": reading its 16-byte header (6 bytes read): timed out while reading the response`; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
}
