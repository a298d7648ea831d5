package engine

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/pkg/audit"
)

// A live run's logs are looked at before its first sample: one in no
// known form is an *AuditError at once; one whose head cannot decide (an
// empty file the server may still write, a stream whose first
// bundle.HeadBytes hold no record) is left to the read at the end. A
// stream looked at still gives every byte to that read.
func TestCheckAuditLogs(t *testing.T) {
	dir := t.TempDir()
	event := auditEvent("a1", "slow-informer", "127.0.0.2", "2026-11-29T10:22:03.339100Z")
	junk := strings.Repeat("x\n", bundle.HeadBytes)
	file := func(name, content string) bundle.AuditSource {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return bundle.AuditFile(p)
	}
	for _, tc := range []struct {
		name    string
		src     bundle.AuditSource
		unknown bool
	}{
		{"upstream", file("upstream.log", event), false},
		{"in no form", file("hello.log", "hello\x00world\n"), true},
		{"empty", file("empty.log", ""), false},
		{"a record after junk", file("late.log", junk+event), false},
		{"a file of junk", file("junk.log", junk), true},
		{"a stream in no form", bundle.AuditStream("<stdin>", strings.NewReader("hello\n")), true},
		{"a stream whose head is junk", bundle.AuditStream("<stdin>", strings.NewReader(junk+event)), false},
		{"no head", bundle.AuditSource{Name: "once", Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("hello\n")), nil }}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckAuditLogs(context.Background(), []bundle.AuditSource{tc.src})
			var ae *AuditError
			var unknown *audit.UnknownFormatError
			if got := errors.As(err, &ae) && errors.As(err, &unknown); got != tc.unknown || !tc.unknown && err != nil {
				t.Fatalf("CheckAuditLogs = %v; want an unknown form: %v", err, tc.unknown)
			}
		})
	}
	t.Run("a stream looked at", func(t *testing.T) {
		src := bundle.AuditStream("<stdin>", strings.NewReader(junk+event))
		if err := CheckAuditLogs(context.Background(), []bundle.AuditSource{src}); err != nil {
			t.Fatal(err)
		}
		rc, err := src.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		if err != nil || string(b) != junk+event {
			t.Errorf("the read after the look got %d bytes (%v), want the %d of the stream", len(b), err, len(junk+event))
		}
	})
}
