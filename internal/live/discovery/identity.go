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

// idHashLen is the length of the label's value: "sha256:" and 64 hex
// digits.
const idHashLen = 7 + 64

// idHashOf is the first apiserver_id_hash value of a /metrics text, ""
// when none, or when it is not "sha256:" and 64 lowercase hex digits as
// kube-apiserver writes it (getHash, %x): anything else counts as no
// hash (issue 35: a value holding ESC and U+202E became part of an
// instance name).
func idHashOf(text []byte) string {
	i := bytes.Index(text, idHashLabel)
	if i < 0 {
		return ""
	}
	rest := text[i+len(idHashLabel):]
	if len(rest) <= idHashLen || rest[idHashLen] != '"' || !bytes.HasPrefix(rest, []byte("sha256:")) {
		return ""
	}
	for _, c := range rest[7:idHashLen] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return ""
		}
	}
	return string(rest[:idHashLen])
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
