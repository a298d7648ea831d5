package trace_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/watch-doctor/watch-doctor/pkg/trace"
)

// FuzzRead feeds Read hostile input: a real trace of this process cut at
// many points, with a wrong version header, with bytes flipped, and random
// bytes. Read must not panic, must stay within its bounds, and must flag
// every fault: an error always comes with a nil or Truncated Summary.
func FuzzRead(f *testing.F) {
	st := newSelfTrace(f)
	data := st.data.Bytes()
	f.Add(data)
	for _, cut := range []int{0, 8, 16, 17, 64, len(data) / 3, len(data) / 2, len(data) - 1} {
		f.Add(data[:cut])
	}
	f.Add(append([]byte("go 1.21 trace\x00\x00\x00"), data[16:]...))
	f.Add(append([]byte("go 1.23 trace\x00\x00\x00"), data[16:]...))
	f.Add(append([]byte("go 1.26 trace\x00\x00\x00"), bytes.Repeat([]byte{0xff}, 256)...))
	f.Add([]byte("goroutine 1 [running]:\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		const maxBytes = 1 << 20
		sum, err := trace.Read(bytes.NewReader(in), trace.Options{Source: "fuzz", MaxBytes: maxBytes, MaxGoroutines: 16, MaxFrames: 8})
		var version *trace.VersionError
		switch {
		case err != nil && errors.As(err, &version):
			if sum != nil {
				t.Fatalf("version error %v with a summary", err)
			}
		case err != nil:
			if sum == nil || !sum.Truncated || sum.Why == "" {
				t.Fatalf("error %v with summary %+v: want it flagged Truncated", err, sum)
			}
		case sum == nil || sum.Truncated:
			t.Fatalf("no error but summary %+v", sum)
		}
		if sum == nil {
			return
		}
		if sum.Bytes > maxBytes || len(sum.Goroutines) > 16 {
			t.Fatalf("bounds: %d bytes, %d goroutines", sum.Bytes, len(sum.Goroutines))
		}
		for _, g := range sum.Goroutines {
			if len(g.Stack) > 8 || g.Transitions < 0 || g.LongestGap < 0 || len(g.WokenBy) > trace.MaxWakers {
				t.Fatalf("goroutine out of bounds: %+v", g)
			}
		}
	})
}
