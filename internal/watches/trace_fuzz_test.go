package watches

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadTrace feeds the trace route (parser and classifier) cuts and
// mutations of the real seed trace: it must not panic, must flag every
// fault, and must keep only watch-path classes. internal/diagnosis's
// FuzzDiagnoseTrace decides what this route keeps.
func FuzzReadTrace(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "trace-seed", "bundle", "127.0.0.1", "trace.out"))
	if err != nil {
		f.Fatal(err)
	}
	for _, n := range []int{16, 4 << 10, 64 << 10, 256 << 10} {
		f.Add(data[:n])
	}
	f.Add(append([]byte("go 1.25 trace\x00\x00\x00"), data[16:64<<10]...))
	f.Fuzz(func(t *testing.T, in []byte) {
		tr, err := ReadTrace(bytes.NewReader(in), TraceOptions{Source: "fuzz", MaxBytes: 1 << 20})
		if tr == nil {
			if err == nil {
				t.Fatal("no trace and no error")
			}
			return
		}
		if (err != nil) != tr.Truncated {
			t.Fatalf("error %v but truncated %v", err, tr.Truncated)
		}
		for _, g := range tr.Goroutines {
			switch g.Class {
			case TraceWatcher, TraceHandler, TraceAPFWait, TraceCacheWait:
			default:
				t.Fatalf("goroutine %d kept with class %q", g.ID, g.Class)
			}
		}
	})
}
