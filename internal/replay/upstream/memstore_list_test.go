package upstream

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/storage"
)

// The reads are tested by upstream's storage suite (memstore_test.go: Get,
// GetList with paging and continuation, compaction); these pin the errors
// a client reads, in etcd3's words.

func TestRequireRevision(t *testing.T) {
	s := newMemStoreForTests()
	tests := []struct {
		min  string
		want func(error) bool
		what string
	}{
		{min: "", want: func(err error) bool { return err == nil }, what: "no error"},
		{min: "3", want: func(err error) bool { return err == nil }, what: "no error"},
		{min: "5", want: func(err error) bool { return err == nil }, what: "no error"},
		{min: "6", want: storage.IsTooLargeResourceVersion, what: "a too large resource version error"},
		{min: "x1", want: apierrors.IsBadRequest, what: "a 400"},
	}
	for _, tt := range tests {
		if err := s.requireRevision(tt.min, 5); !tt.want(err) {
			t.Errorf("requireRevision(%q, 5) = %v, want %s", tt.min, err, tt.what)
		}
	}
}

func TestCompactedListError(t *testing.T) {
	list := compactedListError(storage.ListOptions{}, "/pods/ns/a", "/pods/")
	if !apierrors.IsResourceExpired(list) || apierrors.ReasonForError(list) != "Expired" || list.Error() != listTooOldMessage {
		t.Errorf("list at a compacted revision: %v, want a 410 %q", list, listTooOldMessage)
	}
	opts := storage.ListOptions{Predicate: storage.SelectionPredicate{Continue: "token"}}
	cont := compactedListError(opts, "/pods/ns/a", "/pods/")
	if !apierrors.IsResourceExpired(cont) || cont.Error() != continueTooOldInconsistentMessage {
		t.Fatalf("continue at a compacted revision: %v, want a 410 %q", cont, continueTooOldInconsistentMessage)
	}
	status := cont.(*apierrors.StatusError)
	key, rv, err := storage.DecodeContinue(status.ErrStatus.ListMeta.Continue, "/pods/")
	if err != nil || key != "/pods/ns/a" || rv != -1 {
		t.Errorf("the inconsistent continue token decodes to %q, %d, %v; want the next key and -1", key, rv, err)
	}
}
