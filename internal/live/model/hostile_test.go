package model

import (
	"context"
	"testing"
	"time"

	"k8s.io/utils/clock"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// hostileClient is a fake API server serving t2 whose answer to key is h,
// and a client of it as its one pinned instance, as a run makes one.
func hostileClient(t *testing.T, key string, h *fakeapiserver.Hostility) (*fakeapiserver.Server, *Client) {
	t.Helper()
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.Hostile = map[string]*fakeapiserver.Hostility{key: h}
	cfg := Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), RequestTimeout: time.Minute, Clock: clock.RealClock{}, Force: true}
	c, err := cfg.ClientFor(Instance{Name: s.Address(), Address: s.Address(), Pinned: true})
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// getMetrics GETs /metrics with c and reads it as the sampler does
// (ReadMetricsText), returning the error its fetch records: the
// *TooLargeError the read failed with, else the error.
func getMetrics(c *Client) error {
	resp, err := c.Get(context.Background(), "/metrics")
	if err != nil {
		return err
	}
	defer resp.Close()
	_, err = ReadMetricsText(resp.Body, c.Inst.Name)
	if tl := TooLarge(err); tl != nil {
		return tl
	}
	return err
}
