package cluster

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/rest"
)

func TestReadyzAt(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    string
		wantErr string
	}{
		{name: "ready", status: http.StatusOK, body: "ok"},
		{name: "a check failing", status: http.StatusInternalServerError, body: "[-]etcd failed: reason withheld\nreadyz check failed",
			wantErr: "GET /readyz: "},
		{name: "200 but not ok", status: http.StatusOK, body: "starting", wantErr: `GET /readyz: "starting"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/readyz" {
					http.NotFound(w, r)
					return
				}
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
			err := readyzAt(context.Background(), cfg)
			checkError(t, "readyzAt", err, tt.wantErr)
		})
	}
}
