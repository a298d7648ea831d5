package h2sniff

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/http2"
)

// TestParse feeds frames written by x/net/http2's Framer one byte at a
// time and all at once.
func TestParse(t *testing.T) {
	var buf bytes.Buffer
	fr := http2.NewFramer(&buf, nil)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(fr.WriteSettings())
	must(fr.WriteData(1, false, bytes.Repeat([]byte("x"), 20000)))
	must(fr.WriteRSTStream(1, http2.ErrCodeInternal))
	must(fr.WriteData(3, true, []byte("last")))
	must(fr.WriteData(5, false, nil))
	must(fr.WriteGoAway(5, http2.ErrCodeNo, nil))
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	want := []End{
		{StreamID: 1, Reset: true, Code: http2.ErrCodeInternal, At: at},
		{StreamID: 3, At: at},
	}
	for _, chunk := range []int{1, 7, buf.Len()} {
		rec := &Recorder{now: func() time.Time { return at }}
		c := &conn2{rec: rec}
		b := buf.Bytes()
		for len(b) > 0 {
			k := min(chunk, len(b))
			c.parse(b[:k])
			b = b[k:]
		}
		if diff := cmp.Diff(want, rec.Ends()); diff != "" {
			t.Errorf("chunks of %d: ends (-want +got):\n%s", chunk, diff)
		}
		if !rec.GoAway().Equal(at) {
			t.Errorf("chunks of %d: GoAway() = %v, want %v", chunk, rec.GoAway(), at)
		}
	}
}
