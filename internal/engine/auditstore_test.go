package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/audit"
)

// auditStore is a Raw target keeping audit logs in memory (collect's
// bundle keeps them on disk); fail makes StoreAudit fail without reading.
type auditStore struct {
	kept map[string]string
	fail error
}

func (s *auditStore) Store(string, int, api.FileKind, io.Reader) error { return nil }

func (s *auditStore) StoreAudit(name string, body io.Reader) (string, error) {
	if s.fail != nil {
		return "", s.fail
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return "", err
	}
	if s.kept == nil {
		s.kept = map[string]string{}
	}
	s.kept[name] = string(b)
	return "audit/" + name, nil
}

// rawTarget keeps no audit log.
type rawTarget struct{}

func (rawTarget) Store(string, int, api.FileKind, io.Reader) error { return nil }

func logSource(name, content string) bundle.AuditSource {
	return bundle.AuditSource{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(content)), nil }}
}

// TestStoreAudit: each log's watch requests are copied to the target and
// recorded in the manifest; a log without any keeps no file; a log that
// cannot be read, a target that cannot keep logs and a copy that failed
// are errors naming what failed.
func TestStoreAudit(t *testing.T) {
	t.Parallel()
	watches := auditEvent("a1", "slow-informer", "127.0.0.2", "2026-11-29T10:22:03Z") + auditEvent("a2", "fast-informer", "127.0.0.3", "2026-11-29T10:22:04Z")
	get := strings.ReplaceAll(strings.ReplaceAll(auditEvent("g1", "kubectl", "127.0.0.4", "2026-11-29T10:22:05Z"), `"verb":"watch"`, `"verb":"get"`), "?watch=true", "")
	storeFailed := errors.New("disk full")
	for _, tc := range []struct {
		name    string
		sources []bundle.AuditSource
		fail    error
		target  func(*auditStore) model.Target
		want    []api.AuditLogCopy
		kept    []string // the auditIDs the copy holds
		wantErr string
	}{
		{name: "no log"},
		{name: "watches copied", sources: []bundle.AuditSource{logSource("audit.log", watches+get)},
			want: []api.AuditLogCopy{{Source: "audit.log", File: "audit/audit.log", Watches: 2, Lines: 3}}, kept: []string{`"auditID":"a1"`, `"auditID":"a2"`}},
		{name: "no watch, no file", sources: []bundle.AuditSource{logSource("audit.log", get)},
			want: []api.AuditLogCopy{{Source: "audit.log", Lines: 1}}},
		{name: "a target without logs", sources: []bundle.AuditSource{logSource("audit.log", watches)}, target: func(*auditStore) model.Target { return rawTarget{} },
			wantErr: "audit logs given to a target that cannot keep them (engine.rawTarget)"},
		{name: "the copy failed", sources: []bundle.AuditSource{logSource("audit.log", watches)}, fail: storeFailed, wantErr: "disk full"},
		{name: "no format", sources: []bundle.AuditSource{logSource("garbage.log", "\x00\x01 not a log\n")}, wantErr: `reading audit log: `},
		{name: "not opened", sources: []bundle.AuditSource{{Name: "gone.log", Open: func() (io.ReadCloser, error) {
			return nil, &fs.PathError{Op: "open", Path: "gone.log", Err: fs.ErrNotExist}
		}}}, wantErr: `reading audit log: "gone.log": file does not exist`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &auditStore{fail: tc.fail}
			var target model.Target = st
			if tc.target != nil {
				target = tc.target(st)
			}
			got, err := storeAudit(context.Background(), tc.sources, target)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one saying %q", err, tc.wantErr)
				}
				if tc.fail != nil && !errors.Is(err, tc.fail) {
					t.Errorf("err %v, want the store's own", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("copies (-want +got):\n%s", diff)
			}
			for _, id := range tc.kept {
				if !strings.Contains(st.kept["audit.log"], id) {
					t.Errorf("the copy lacks %s:\n%s", id, st.kept["audit.log"])
				}
			}
			if len(tc.kept) == 0 && len(st.kept) != 0 {
				t.Errorf("files kept %q, want none", st.kept)
			}
		})
	}
}

// TestStoredCopy: the read's own error comes first, then the store's; a
// read that failed only because the copy did is the store's failure.
func TestStoredCopy(t *testing.T) {
	t.Parallel()
	sum := &audit.Summary{Watches: 3, Lines: 5}
	readErr, storeErr := errors.New("line 4: too long"), errors.New("disk full")
	for _, tc := range []struct {
		name        string
		read, store error
		want        api.AuditLogCopy
		wantErr     error
	}{
		{"stored", nil, nil, api.AuditLogCopy{Source: "a.log", File: "f", Watches: 3, Lines: 5}, nil},
		{"the read failed", readErr, storeErr, api.AuditLogCopy{}, readErr},
		{"the store failed", fmt.Errorf("writing: %w", errCopyFailed), storeErr, api.AuditLogCopy{}, storeErr},
		{"the copy failed, the store said nothing", errCopyFailed, nil, api.AuditLogCopy{}, errCopyFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := storedCopy("a.log", sum, tc.read, "f", tc.store)
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Errorf("err %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("copy (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnwrapPath: an error naming the log's path is said without it,
// the log being named already.
func TestUnwrapPath(t *testing.T) {
	t.Parallel()
	plain := errors.New("boom")
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"not regular", &bundle.NotRegularError{Path: "p", Mode: fs.ModeNamedPipe}, `a named pipe (FIFO), not a regular file: save the log to a file first, or give it on stdin as "-"`},
		{"path error", &fs.PathError{Op: "open", Path: "p", Err: fs.ErrPermission}, "permission denied"},
		{"plain", plain, "boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := unwrapPath(tc.err).Error(); got != tc.want {
				t.Errorf("unwrapPath = %q, want %q", got, tc.want)
			}
		})
	}
	err := &AuditError{plain}
	if err.Error() != "reading audit log: boom" || !errors.Is(err, plain) {
		t.Errorf("AuditError %q does not say or wrap its error", err)
	}
}
