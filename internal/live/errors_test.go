package live

import (
	"context"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestErrorBodiesAreEscaped: the error body of a failed debug GET reaches
// the error text with its control characters (C0, C1, TAB) escaped.
func TestErrorBodiesAreEscaped(t *testing.T) {
	t.Parallel()
	body := "boom\x1b[31m red\x07\r\u009b2J\there"
	s := hostileServer(t, "/debug/pprof/goroutine?debug=1", &fakeapiserver.Hostility{Kind: fakeapiserver.ErrorBody, Body: body})
	res, err := Run(context.Background(), hostileConfig(t, s), NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	got := fetchOf(t, res, api.FileGoroutineDebug1).Error
	want := `HTTP 500: boom\x1b[31m red\x07\x0d\u009b2J\there`
	if !strings.Contains(got, want) {
		t.Errorf("error %q, want it to hold %q", got, want)
	}
	for _, r := range got {
		if r < 0x20 || r >= 0x7f && r < 0xa0 {
			t.Errorf("error %q holds the control character %U", got, r)
		}
	}
}
