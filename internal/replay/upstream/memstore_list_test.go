package upstream

import (
	"context"
	"testing"

	storagetesting "k8s.io/apiserver/pkg/storage/testing"
)

// TestUpstreamListBehaviour runs upstream's tests of what memstore_list.go
// holds: Get, GetList with paging and continuation, and reads at a
// compacted revision.
func TestUpstreamListBehaviour(t *testing.T) {
	runStorageTests(t, []storageTest{
		{"Get", func(ctx context.Context, t *testing.T, s *MemStore) { storagetesting.RunTestGet(ctx, t, s) }},
		{"ListPaginationRareObject", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestListPaginationRareObject(ctx, t, s, noCallsValidation)
		}},
		{"ListInconsistentContinuation", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestListInconsistentContinuation(ctx, t, s, compaction(s))
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
	})
}
