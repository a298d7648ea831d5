package live

import (
	"context"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestErrorBodiesKeepTheirValue: the error body of a failed debug GET
// reaches the error text as the server wrote it (its first line): the
// manifest and -o json keep the value, and the printers escape it
// (internal/cli's TestErrorBodiesAreEscapedWherePrinted).
func TestErrorBodiesKeepTheirValue(t *testing.T) {
	t.Parallel()
	body := "boom\x1b[31m red\x07\r\u009b2J\there\nsecond line"
	s := hostileServer(t, "/debug/pprof/goroutine?debug=1", &fakeapiserver.Hostility{Kind: fakeapiserver.ErrorBody, Body: body})
	res, err := Run(context.Background(), hostileConfig(t, s), NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	got := fetchOf(t, res, api.FileGoroutineDebug1).Error
	if want := "HTTP 500: boom\x1b[31m red\x07\r\u009b2J\there"; !strings.HasSuffix(got, want) {
		t.Errorf("error %q, want it to end in %q", got, want)
	}
}
