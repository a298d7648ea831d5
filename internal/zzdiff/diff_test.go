package zzdiff

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/zzdiff/orig"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

func FuzzDiff(f *testing.F) {
	for _, p := range []string{"../../testdata/kube-apiserver-v1.37.2/seed-repro/t2/goroutine-debug2.txt"} {
		b, _ := os.ReadFile(p)
		for i := 0; i+4000 < len(b); i += 97000 {
			f.Add(b[i : i+4000])
		}
	}
	f.Add([]byte("goroutine 1 [running]:\nmain.f(0x1)\n\t/a.go:1 +0x1\ncreated by x in goroutine 5\n\t/b.go:2 +0x2\n\ngoroutine 2 [select, 3 minutes, locked to thread]:\nmain.(*T).g(...)\n\t/a b.go:3\ncreated by main.h in goroutine 12a\n\t/c.go:1\n"))
	f.Add([]byte("goroutine 1 [running]:\n((x(\n\t/a.go:1 +0x1\n(a)\n\t:1\ncreated by y in goroutine  in goroutine 7\n\tq.go:9 +0x1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, skip := range []bool{false, true} {
			a := stacks.NewScanner(bytes.NewReader(data))
			a.SkipArgs = skip
			b := orig.NewScanner(bytes.NewReader(data))
			b.SkipArgs = skip
			for {
				na, nb := a.Next(), b.Next()
				if na != nb {
					t.Fatalf("Next %v vs %v", na, nb)
				}
				if !na {
					break
				}
				ga, gb := a.Goroutine(), b.Goroutine()
				ja := []any{ga.ID, ga.State, ga.WaitMinutes, ga.LockedToThread, ga.Flags, ga.Labels, ga.FramesElided, ga.StackUnavailable, ga.CreatedBy.Func, ga.CreatedBy.File, ga.CreatedBy.Line, ga.ParentID, ga.Line, len(ga.Frames)}
				jb := []any{gb.ID, gb.State, gb.WaitMinutes, gb.LockedToThread, gb.Flags, gb.Labels, gb.FramesElided, gb.StackUnavailable, gb.CreatedBy.Func, gb.CreatedBy.File, gb.CreatedBy.Line, gb.ParentID, gb.Line, len(gb.Frames)}
				if !reflect.DeepEqual(ja, jb) {
					t.Fatalf("goroutine differs:\n%v\n%v", ja, jb)
				}
				for i := range ga.Frames {
					x, y := ga.Frames[i], gb.Frames[i]
					if x.Func != y.Func || x.File != y.File || x.Line != y.Line || x.Args != y.Args {
						t.Fatalf("frame %d differs: %+v vs %+v", i, x, y)
					}
				}
			}
			ea, eb := a.Err(), b.Err()
			if (ea == nil) != (eb == nil) || (ea != nil && ea.Error() != eb.Error()) {
				t.Fatalf("err %v vs %v", ea, eb)
			}
			sa, sb := a.Stats(), b.Stats()
			if sa.Lines != sb.Lines || sa.Goroutines != sb.Goroutines || sa.CreatedBy != sb.CreatedBy || sa.WithParentID != sb.WithParentID || sa.SkippedLines != sb.SkippedLines || sa.Bytes != sb.Bytes {
				t.Fatalf("stats %+v vs %+v", sa, sb)
			}
		}
	})
}
