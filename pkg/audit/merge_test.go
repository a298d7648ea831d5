package audit

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		if _, err := Scan(context.Background(), bytesReader(in), "l", DefaultLimits(), func(*Event) error { return nil }); err != nil {
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

// A request's stages are merged in either order (gcloud prints the newest
// first), and a stage after the request was passed on is not a second
// request; the timeout is read from the query only when it is a count of
// seconds.
func TestMergeStages(t *testing.T) {
	uri := "/api/v1/pods?timeoutSeconds=300&watch=true"
	started := line("a", "ResponseStarted", "watch", "u", uri, "10.0.0.1", "ua")
	complete := strings.Replace(line("a", "ResponseComplete", "watch", "u", uri, "10.0.0.1", "ua"), `"stageTimestamp":"2026-11-29T10:22:03.339000Z"`, `"stageTimestamp":"2026-11-29T10:27:03Z"`, 1)
	for name, in := range map[string]string{"in order": started + complete, "newest first": complete + started, "a stage after": started + complete + started} {
		got, err := Read(context.Background(), strings.NewReader(in), "m.log", DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Events) != 1 || got.Events[0].Completed.IsZero() || got.Events[0].TimeoutSeconds != 300 || got.Events[0].RequestReceived.IsZero() {
			t.Errorf("%s: %+v: want one request, received, completed, timeout 300", name, got.Events)
		}
	}
	for q, want := range map[string]int{"timeoutSeconds=5": 5, "timeoutSeconds=-5": 0, "timeoutSeconds=1.5": 0, "timeoutSeconds=99999999999": 0, "watch=true": 0} {
		if got := timeoutOf([]byte("/api/v1/pods?" + q)); got != want {
			t.Errorf("timeoutOf(%s) = %d, want %d", q, got, want)
		}
	}
}

// ScanFilter asks once per request, at its first record: a refused
// request is counted, never passed on, and its later stages are not new
// requests, whether or not the log shows its end; the kept ones merge
// their stages as Scan does.
func TestScanFilter(t *testing.T) {
	uri := "/api/v1/pods?timeoutSeconds=300&watch=true"
	var b strings.Builder
	for i := range 1000 {
		user := "other"
		if i%100 == 0 {
			user = "kept"
		}
		id := fmt.Sprintf("id-%d", i)
		b.WriteString(line(id, "ResponseStarted", "watch", user, uri, "10.0.0.1", "ua"))
		if i%2 == 0 {
			b.WriteString(line(id, "ResponseComplete", "watch", user, uri, "10.0.0.1", "ua"))
		}
	}
	asked := 0
	var got []string
	sum, err := ScanFilter(context.Background(), strings.NewReader(b.String()), "f.log", DefaultLimits(), func(e *Event) bool {
		asked++
		return e.User == "kept"
	}, func(e *Event) error {
		got = append(got, fmt.Sprintf("%s %v", e.AuditID, !e.Completed.IsZero()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"id-0 true", "id-100 true", "id-200 true", "id-300 true", "id-400 true", "id-500 true", "id-600 true", "id-700 true", "id-800 true", "id-900 true"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("passed on (-want +got):\n%s", diff)
	}
	if asked != 1000 || sum.Watches != 1000 {
		t.Errorf("asked %d times, %d watch requests counted; want 1000 and 1000", asked, sum.Watches)
	}
}
