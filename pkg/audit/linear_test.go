package audit

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"testing"
)

// Scan's work grows linearly with the log: the heap allocations (count
// and bytes) reading n watch requests in two stages, 100 lines apart,
// then 2n, must not more than double (with 5% for the maps' growth
// steps). Before, a skipped line kept a record each and the stages of a
// request were merged through a map of every request of the log.
func TestScanIsLinear(t *testing.T) {
	log := func(n int) []byte {
		var b bytes.Buffer
		for i := range n {
			uri := fmt.Sprintf("/api/v1/namespaces/ns-%d/pods?timeoutSeconds=300&watch=true", i%50)
			b.WriteString(line(fmt.Sprintf("id-%d", i), "ResponseStarted", "watch", fmt.Sprintf("user-%d", i%300), uri, "10.0.0.1", "ua"))
			if i >= 100 {
				b.WriteString(line(fmt.Sprintf("id-%d", i-100), "ResponseComplete", "watch", fmt.Sprintf("user-%d", (i-100)%300), uri, "10.0.0.1", "ua"))
			}
			b.WriteString("x\n")
		}
		return b.Bytes()
	}
	cost := func(in []byte) (allocs, bytes uint64) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := Scan(context.Background(), bytesReader(in), "l", DefaultLimits, func(*Event) error { return nil }); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs, after.TotalAlloc - before.TotalAlloc
	}
	small, large := log(5_000), log(10_000)
	a1, b1 := cost(small)
	a2, b2 := cost(large)
	if float64(a2) > 2.1*float64(a1) || float64(b2) > 2.1*float64(b1) {
		t.Errorf("requests 5,000 -> 10,000: allocations %d -> %d, bytes %d -> %d: more than doubled", a1, a2, b1, b2)
	}
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
