package live

import (
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// hostileConfig is a Config reading s as its one pinned instance.
func hostileConfig(t *testing.T, s *fakeapiserver.Server) model.Config {
	t.Helper()
	return model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), APIServers: []string{s.Address()}, Samples: 1, RequestTimeout: time.Minute, Clock: testingclock.NewFakeClock(time.Now()), Force: true}
}

// fetchOf returns the record of kind's fetch in the only sample of res.
func fetchOf(t *testing.T, res *Result, kind api.FileKind) api.FetchInfo {
	t.Helper()
	for _, f := range res.Instances[0].Samples[0].Fetches {
		if f.Kind == kind {
			return f
		}
	}
	t.Fatalf("no %s fetch in %+v", kind, res.Instances[0].Samples[0].Fetches)
	return api.FetchInfo{}
}

func hostileServer(t *testing.T, key string, h *fakeapiserver.Hostility) *fakeapiserver.Server {
	t.Helper()
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.Hostile = map[string]*fakeapiserver.Hostility{key: h}
	return s
}
