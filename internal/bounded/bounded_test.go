package bounded

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadAllFailsPastItsBoundNamingTheInput(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      int
		limit   int64
		wantLen int
		wantErr bool
	}{
		{"under", 10, 16, 10, false},
		{"exactly the bound", 16, 16, 16, false},
		{"one byte over", 17, 16, 16, true},
		{"far over", 1 << 20, 16, 16, true},
		{"empty", 0, 16, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// iotest-style one-byte reads and big reads must agree.
			for _, r := range []io.Reader{bytes.NewReader(make([]byte, tc.in)), &oneByte{n: tc.in}} {
				b, err := ReadAll(r, tc.limit, "x/metrics.txt", "/metrics")
				var tl *TooLargeError
				if got := errors.As(err, &tl); got != tc.wantErr {
					t.Fatalf("err = %v, want a TooLargeError: %v", err, tc.wantErr)
				}
				if tc.wantErr && !strings.Contains(err.Error(), "x/metrics.txt holds more than 16 B") {
					t.Errorf("error %q does not name the input and its bound", err)
				}
				if diff := cmp.Diff(tc.wantLen, len(b)); diff != "" {
					t.Errorf("bytes read (-want +got):\n%s", diff)
				}
			}
		})
	}
}

type oneByte struct{ n int }

func (o *oneByte) Read(p []byte) (int, error) {
	if o.n == 0 {
		return 0, io.EOF
	}
	o.n--
	p[0] = 'x'
	return 1, nil
}

func TestBytes(t *testing.T) {
	for in, want := range map[int64]string{16 << 20: "16 MiB", 256: "256 B", 1 << 30: "1 GiB", 64 << 10: "64 KiB", 1500: "1500 B"} {
		if got := Bytes(in); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", in, got, want)
		}
	}
}
