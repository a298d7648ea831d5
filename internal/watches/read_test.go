package watches

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

func seedFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "seed-repro", "t2", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The three forms of one real capture agree on what the classifier can
// count in each, and all three are a kube-apiserver's.
func TestReadDumpAndReadProfileAgree(t *testing.T) {
	d2, err := ReadDump(bytes.NewReader(seedFile(t, "goroutine-debug2.txt")), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	initial := 0
	for _, w := range d2.Watchers {
		if w.Phase == api.PhaseInitial {
			initial++
		}
	}
	for _, tc := range []struct{ file, format string }{
		{"goroutine-debug1.txt", FormatDebug1},
		{"goroutine.pb.gz", FormatProtobuf},
	} {
		t.Run(tc.format, func(t *testing.T) {
			a, d, err := ReadProfile(bytes.NewReader(seedFile(t, tc.file)), tc.format)
			if err != nil {
				t.Fatal(err)
			}
			if a.Total != d.Goroutines || d.Format != tc.format || !d.Aggregated() {
				t.Errorf("profile of %d goroutines, dump of %d in format %q", a.Total, d.Goroutines, d.Format)
			}
			got := 0
			for _, pc := range d.PhaseCounts {
				if pc.Phase == api.PhaseInitial {
					got += pc.Count
				}
			}
			if got != initial {
				t.Errorf("%d initial-phase watchers counted, the debug=2 dump of the same capture holds %d", got, initial)
			}
			if !d.APIServer || !d2.APIServer {
				t.Errorf("APIServer = %v (profile), %v (debug=2): a kube-apiserver's capture", d.APIServer, d2.APIServer)
			}
		})
	}
}

func TestReadProfileErrors(t *testing.T) {
	if _, _, err := ReadProfile(strings.NewReader(""), FormatDebug2); err == nil || !strings.Contains(err.Error(), `format "debug=2"`) {
		t.Errorf("debug=2 as a profile: err = %v, want the unsupported format named", err)
	}
	_, _, err := ReadProfile(strings.NewReader("goroutine profile: total x\n"), FormatDebug1)
	var se *stacks.SyntaxError
	if !errors.As(err, &se) || se.Line() != 1 {
		t.Errorf("bad debug=1 header: err = %v, want a *stacks.SyntaxError at line 1", err)
	}
}

// A goroutine id listed twice means a second dump starts there: the error
// names its line and the first listing's.
func TestReadDumpRefusesConcatenatedDumps(t *testing.T) {
	const one = "goroutine 1 [running]:\nmain.main()\n\t/x/main.go:1 +0x1\n\ngoroutine 7 [select]:\nmain.f()\n\t/x/main.go:2 +0x1\n"
	_, err := ReadDump(strings.NewReader(one+"\n"+one), ReadOptions{})
	var se *stacks.SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want a *stacks.SyntaxError", err)
	}
	if diff := cmp.Diff("line 9: a second goroutine dump starts here (goroutine 1 was already listed at line 1): the input holds concatenated dumps; split it into one file per capture (one directory each)", se.Error()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	d, err := ReadDump(strings.NewReader(one), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Goroutines != 2 || d.APIServer {
		t.Errorf("goroutines %d, APIServer %v: want 2 of a process that is no kube-apiserver", d.Goroutines, d.APIServer)
	}
}
