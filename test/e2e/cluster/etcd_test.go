package cluster

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestEtcdHealthy(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    string
		wantErr string
	}{
		{name: "healthy", status: http.StatusOK, body: `{"health":"true","reason":""}`},
		{name: "unhealthy", status: http.StatusServiceUnavailable, body: `{"health":"false","reason":"RAFT NO LEADER"}`,
			wantErr: `GET /health: 503 Service Unavailable: health "false" RAFT NO LEADER`},
		{name: "200 but not healthy", status: http.StatusOK, body: `{"health":"false"}`, wantErr: `health "false"`},
		{name: "not JSON", status: http.StatusOK, body: "ok", wantErr: "GET /health: 200 OK: invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/health" {
					http.NotFound(w, r)
					return
				}
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			err := etcdHealthy(context.Background(), srv.URL)
			checkError(t, "etcdHealthy", err, tt.wantErr)
		})
	}
}

// checkError fails the test when err is not what want says: nil for "",
// else an error containing want.
func checkError(t *testing.T, what string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("%s: %v", what, err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Fatalf("%s error %v, want one containing %q", what, err, want)
	}
}
