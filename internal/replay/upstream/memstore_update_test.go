package upstream

import (
	"context"
	"testing"

	storagetesting "k8s.io/apiserver/pkg/storage/testing"
)

// TestUpstreamUpdateBehaviour runs upstream's tests of what
// memstore_update.go holds: deletes and guaranteed updates, with and
// without a cached copy, preconditions and conflicts.
func TestUpstreamUpdateBehaviour(t *testing.T) {
	runStorageTests(t, []storageTest{
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
		{"PreconditionalDeleteWithSuggestion", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestPreconditionalDeleteWithSuggestion(ctx, t, s)
		}},
		{"PreconditionalDeleteWithOnlySuggestionPass", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestPreconditionalDeleteWithOnlySuggestionPass(ctx, t, s)
		}},
		{"GuaranteedUpdateWithSuggestionAndConflict", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestGuaranteedUpdateWithSuggestionAndConflict(ctx, t, s)
		}},
		{"GuaranteedUpdateWithConflict", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestGuaranteedUpdateWithConflict(ctx, t, s)
		}},
		{"ValidateDeletionWithSuggestion", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestValidateDeletionWithSuggestion(ctx, t, s)
		}},
		{"ValidateDeletionWithOnlySuggestionValid", func(ctx context.Context, t *testing.T, s *MemStore) {
			storagetesting.RunTestValidateDeletionWithOnlySuggestionValid(ctx, t, s)
		}},
	})
}
