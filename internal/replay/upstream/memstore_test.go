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

// storageTest runs one of upstream's storage tests against a fresh store.
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

// TestUpstreamStorageBehaviour runs upstream's tests of what memstore.go
// holds: creates, watches and progress notifications.
func TestUpstreamStorageBehaviour(t *testing.T) {
	runStorageTests(t, []storageTest{
		{"Create", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestCreate(ctx, t, s, noKeyValidation)
		}},
		{"CreateWithKeyExist", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestCreateWithKeyExist(ctx, t, s)
		}},
		{"Watch", func(ctx context.Context, t *testing.T, s *MemStore) { storagetesting.RunTestWatch(ctx, t, s) }},
		{"ClusterScopedWatch", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestClusterScopedWatch(ctx, t, s)
		}},
		{"NamespaceScopedWatch", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestNamespaceScopedWatch(ctx, t, s)
		}},
		{"DeleteTriggerWatch", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestDeleteTriggerWatch(ctx, t, s)
		}},
		{"WatchFromZero", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestWatchFromZero(ctx, t, s, compaction(s))
		}},
		{"WatchFromNonZero", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestWatchFromNonZero(ctx, t, s)
		}},
		{"WatchContextCancel", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestWatchContextCancel(ctx, t, s)
		}},
		{"WatchDeleteEventObjectHaveLatestRV", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestWatchDeleteEventObjectHaveLatestRV(ctx, t, s)
		}},
		{"ProgressNotify", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunOptionalTestProgressNotify(ctx, t, s, increaseRV(s))
		}},
		{"SendInitialEventsBackwardCompatibility", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunSendInitialEventsBackwardCompatibility(ctx, t, s)
		}},
	})
}
