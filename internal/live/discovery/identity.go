package discovery

import (
	"bytes"
	"crypto/sha256"
	"fmt"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// Which identity lease a process holds, when its /metrics says so:
// kube-apiserver labels the metrics of its configuration reload
// controllers with apiserver_id_hash, the SHA-256 of its APIServerID
// (k8s.io/apiserver pkg/server/options/authenticationconfig/metrics/
// metrics.go:98-104 in v0.37.2, getHash; the encryption and authorization
// configurations' alike), and the APIServerID is the name of its identity
// lease (k8s.io/kubernetes pkg/controlplane/apiserver/server.go:261 in
// v1.37.2). Those series exist only where such a controller runs (an
// authentication or authorization configuration file, an encryption
// configuration with reload); elsewhere the processes are told apart by
// their start time alone and the leases name no one of them.

// idHashLabel opens the label's value in a /metrics line.
var idHashLabel = []byte(`apiserver_id_hash="`)

// maxIDHash bounds the label's value: "sha256:" and 64 hex digits.
const maxIDHash = 7 + 64

// idHashOf is the first apiserver_id_hash value of a /metrics text, ""
// when none.
func idHashOf(text []byte) string {
	i := bytes.Index(text, idHashLabel)
	if i < 0 {
		return ""
	}
	rest := text[i+len(idHashLabel):]
	end := bytes.IndexByte(rest, '"')
	if end <= 0 || end > maxIDHash {
		return ""
	}
	return string(rest[:end])
}

// LeaseHash is the apiserver_id_hash of the instance holding the lease
// named name.
func LeaseHash(name string) string {
	return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(name)))
}

// leaseOf is the label of the live lease whose name hashes to the
// fingerprint's apiserver_id_hash, "" when none does (or it has none).
func (li liveInstances) leaseOf(fp model.Fingerprint) string {
	if fp.IDHash == "" {
		return ""
	}
	return li.byHash[fp.IDHash]
}
