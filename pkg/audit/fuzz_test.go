package audit

import (
	"bytes"
	"context"
	"testing"
)

// FuzzRead: any input reads to a log or an error, within the bounds.
func FuzzRead(f *testing.F) {
	f.Add([]byte(line("a", "ResponseStarted", "watch", "u", "/api/v1/pods?watch=true", "10.0.0.1", "ua")))
	f.Add([]byte("{\"kind\":\"Event\",\"apiVersion\":\"audit.k8s.io/v1\",\"verb\":\"watch\",\"requestURI\":\"%zz\"}\n"))
	f.Add([]byte{0x1f, 0x8b, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		lim := Limits{Bytes: 1 << 16, Line: 1 << 10, Watches: 64}
		l, err := Read(context.Background(), bytes.NewReader(b), "fuzz", lim)
		if err != nil {
			return
		}
		if len(l.Events) > lim.Watches {
			t.Fatalf("%d events over the bound %d", len(l.Events), lim.Watches)
		}
		for _, e := range l.Events {
			if e.Verb != "watch" || e.Line < 1 || e.Line > l.Lines {
				t.Fatalf("event %+v of a log of %d lines", e, l.Lines)
			}
		}
	})
}
