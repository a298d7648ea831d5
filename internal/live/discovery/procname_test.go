package discovery

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

func TestNameProcesses(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("h", 80)
	type proc struct {
		fp    model.Fingerprint
		lease string
	}
	for _, tc := range []struct {
		name  string
		procs []proc
		want  []string
	}{
		{"by lease, sorted", []proc{{model.Fingerprint{Start: 2}, "cp-b"}, {model.Fingerprint{Start: 1}, "cp-a"}}, []string{"lb:443#cp-a", "lb:443#cp-b"}},
		{"by id hash without a lease", []proc{{model.Fingerprint{Start: 1, IDHash: "sha256:0123456789abcdef"}, ""}}, []string{"lb:443#id-0123456789ab"}},
		{"by start time", []proc{{model.Fingerprint{Start: 1764410000.471}, ""}, {model.Fingerprint{Start: 1764410001}, ""}}, []string{"lb:443#started-1764410000.47", "lb:443#started-1764410001.00"}},
		{"a lease shared: its start time added", []proc{{model.Fingerprint{Start: 2}, "cp"}, {model.Fingerprint{Start: 1}, "cp"}}, []string{"lb:443#cp-started-1.00", "lb:443#cp-started-2.00"}},
		{"the same start to 10 ms: numbered", []proc{{model.Fingerprint{Start: 1.001, IDHash: "b"}, "cp"}, {model.Fingerprint{Start: 1.002, IDHash: "a"}, "cp"}}, []string{"lb:443#cp-started-1.00", "lb:443#cp-started-1.00-2"}},
		{"a long lease cut, kept distinct", []proc{{model.Fingerprint{Start: 1}, long}}, []string{"lb:443#" + boundKey(long)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var clients []*model.Client
			var out []model.InstanceResult
			for _, p := range tc.procs {
				clients = append(clients, &model.Client{Conn: &model.OwnConn{Process: p.fp}})
				out = append(out, model.InstanceResult{Instance: model.Instance{Name: "lb:443", Lease: p.lease}})
			}
			nameProcesses("lb:443", clients, out)
			var got []string
			for i, r := range out {
				got = append(got, r.Instance.Name)
				if clients[i].Inst.Name != r.Instance.Name {
					t.Errorf("client %d is named %q, its result %q", i, clients[i].Inst.Name, r.Instance.Name)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
		})
	}
	if k := boundKey(long); len(k) != maxProcessKey || k == boundKey(long+"x") {
		t.Errorf("boundKey(80 bytes) = %q: want %d bytes, distinct from another long key", k, maxProcessKey)
	}
}
