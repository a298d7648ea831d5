//go:build !apiserver_v038

// Not compiled against v0.38 (make test-replay-v1.38): its storage test
// suite's functions take other arguments there.

package upstream

import (
	"context"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/storage"
	storagetesting "k8s.io/apiserver/pkg/storage/testing"
)

// These run k8s.io/apiserver's own storage behaviour tests
// (pkg/storage/testing, v0.37.2) against MemStore: the ones covering what
// the cacher calls (GetList with paging and continuation, Watch from a
// resource version, progress notifications, compaction) and the writes
// those tests set themselves up with.

func newTestStore(t *testing.T) (context.Context, *MemStore) {
	t.Helper()
	return context.Background(), newMemStoreForTests()
}

// newMemStoreForTests starts at revision 1, as a fresh etcd does, and sends
// progress notifications every 100 ms, as upstream's test etcd does.
func newMemStoreForTests() *MemStore {
	s := NewMemStore(codec, NewPod, NewPodList, "/pods", 2)
	s.ProgressNotifyInterval = 100 * time.Millisecond
	return s
}

func compaction(s *MemStore) storagetesting.Compaction {
	return func(ctx context.Context, t *testing.T, resourceVersion string) {
		rv, err := storage.APIObjectVersioner{}.ParseResourceVersion(resourceVersion)
		if err != nil {
			t.Fatal(err)
		}
		s.Compact(int64(rv))
	}
}

func increaseRV(s *MemStore) storagetesting.IncreaseRVFunc {
	return func(ctx context.Context, t *testing.T) int64 { return s.IncreaseRV() }
}

func noKeyValidation(ctx context.Context, t *testing.T, key string) {}

func noCallsValidation(t *testing.T, pageSize, estimatedProcessedObjects uint64) {}

// storageTest is one of upstream's storage behaviour tests, run on a
// fresh MemStore.
type storageTest struct {
	name string
	run  func(ctx context.Context, t *testing.T, s *MemStore)
}

func runStorageTests(t *testing.T, tests []storageTest) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, s := newTestStore(t)
			tt.run(ctx, t, s)
		})
	}
}

func TestUpstreamStorageBehaviour(t *testing.T) {
	tests := []storageTest{
		{"Create", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestCreate(ctx, t, s, noKeyValidation)
		}},
		{"CreateWithKeyExist", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestCreateWithKeyExist(ctx, t, s)
		}},
		{"Get", func(ctx context.Context, t *testing.T, s *MemStore) { storagetesting.RunTestGet(ctx, t, s) }},
		{"UnconditionalDelete", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestUnconditionalDelete(ctx, t, s)
		}},
		{"ConditionalDelete", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestConditionalDelete(ctx, t, s)
		}},
		{"DeleteWithSuggestion", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestDeleteWithSuggestion(ctx, t, s)
		}},
		{"DeleteWithSuggestionAndConflict", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestDeleteWithSuggestionAndConflict(ctx, t, s)
		}},
		{"DeleteWithConflict", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestDeleteWithConflict(ctx, t, s)
		}},
		{"DeleteWithSuggestionOfDeletedObject", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestDeleteWithSuggestionOfDeletedObject(ctx, t, s)
		}},
		{"ValidateDeletionWithSuggestion", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestValidateDeletionWithSuggestion(ctx, t, s)
		}},
		{"ValidateDeletionWithOnlySuggestionValid", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestValidateDeletionWithOnlySuggestionValid(ctx, t, s)
		}},
		{"PreconditionalDeleteWithSuggestion", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestPreconditionalDeleteWithSuggestion(ctx, t, s)
		}},
		{"PreconditionalDeleteWithOnlySuggestionPass", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestPreconditionalDeleteWithOnlySuggestionPass(ctx, t, s)
		}},
		{"GuaranteedUpdateWithSuggestionAndConflict", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestGuaranteedUpdateWithSuggestionAndConflict(ctx, t, s)
		}},
		{"ListPaginationRareObject", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestListPaginationRareObject(ctx, t, s, noCallsValidation)
		}},
		{"ListInconsistentContinuation", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestListInconsistentContinuation(ctx, t, s, compaction(s))
		}},
		{"GuaranteedUpdateWithConflict", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestGuaranteedUpdateWithConflict(ctx, t, s)
		}},
		{"ListPaging", func(ctx context.Context, t *testing.T, s *MemStore) { storagetesting.RunTestListPaging(ctx, t, s) }},
		{"GetListNonRecursive", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestGetListNonRecursive(ctx, t, increaseRV(s), s)
		}},
		{"GetListRecursivePrefix", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestGetListRecursivePrefix(ctx, t, s)
		}},
		{"ListContinuation", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestListContinuation(ctx, t, s, noCallsValidation)
		}},
		{"ListContinuationWithFilter", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestListContinuationWithFilter(ctx, t, s, noCallsValidation)
		}},
		{"NamespaceScopedList", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestNamespaceScopedList(ctx, t, s)
		}},
		{"CompactRevision", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestCompactRevision(ctx, t, s, increaseRV(s), compaction(s))
		}},
	}
	runStorageTests(t, tests)
}
