//go:build !apiserver_v038

// Not compiled against v0.38 (make test-replay-v1.38): its storage test
// suite's functions take other arguments there.

package upstream

import (
	"context"
	"testing"

	storagetesting "k8s.io/apiserver/pkg/storage/testing"
)

// TestUpstreamWatchBehaviour runs k8s.io/apiserver's own watch behaviour
// tests (pkg/storage/testing, v0.37.2) against MemStore's watches
// (memWatch): scoped and cluster watches, watches from zero and from a
// resource version, deletes carrying the latest resource version, context
// cancellation and progress notifications.
func TestUpstreamWatchBehaviour(t *testing.T) {
	tests := []storageTest{
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
	}
	runStorageTests(t, tests)
}
