package discovery

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// The names of the processes reached through the balancer. Each look of
// serve searches again, and the connections reach the processes in
// another order each time, so a process is named by what it is, never by
// when a connection happened to reach it: "HOST:PORT#" (the kubeconfig
// host) and its identity lease's label ("lb:443#cp-a"), or, when its
// /metrics names no lease (identity.go), its apiserver_id_hash
// ("lb:443#id-1a2b3c4d5e6f"), or else its start time
// ("lb:443#started-1764410000.47"). The same process has the same name at
// every look and in every command's output; a restarted instance without
// a lease is a new process, and a new name.

// maxProcessKey bounds the part of a name after '#': a longer lease label
// (a hostname may take 253 bytes) is cut and told apart by a hash.
const maxProcessKey = 64

// processKey is what names a process reached through the balancer,
// without its host.
func processKey(fp model.Fingerprint, lease string) string {
	switch {
	case lease != "":
		return lease
	case fp.IDHash != "":
		h := strings.TrimPrefix(fp.IDHash, "sha256:")
		return "id-" + h[:min(12, len(h))]
	}
	return startKey(fp)
}

func startKey(fp model.Fingerprint) string {
	return "started-" + strconv.FormatFloat(fp.Start, 'f', 2, 64)
}

// boundKey cuts a key past maxProcessKey, keeping it distinct by a hash
// of the whole.
func boundKey(k string) string {
	if len(k) <= maxProcessKey {
		return k
	}
	return fmt.Sprintf("%s~%x", k[:maxProcessKey-12], sha256.Sum256([]byte(k)))[:maxProcessKey]
}

// nameProcesses names each process reached through the kubeconfig host
// (clients[i] and out[i] alike, in the order reached) after host and its
// key; processes sharing a key (instances sharing a hostname share a
// lease) add their start time, and, at the same start time to 10 ms, a
// number in the order of their fingerprints. It then sorts both by name,
// so that every output lists them in one order.
func nameProcesses(host string, clients []*model.Client, out []model.InstanceResult) {
	keys := make([]string, len(out))
	count := map[string]int{}
	for i, c := range clients {
		keys[i] = processKey(c.Conn.Process, out[i].Instance.Lease)
		count[keys[i]]++
	}
	for i, c := range clients {
		if count[keys[i]] > 1 {
			keys[i] += "-" + startKey(c.Conn.Process)
		}
	}
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		pa, pb := clients[a].Conn.Process, clients[b].Conn.Process
		return cmp.Or(cmp.Compare(keys[a], keys[b]), cmp.Compare(pa.Start, pb.Start), cmp.Compare(pa.IDHash, pb.IDHash))
	})
	taken := map[string]int{}
	for _, i := range order {
		k := keys[i]
		if taken[k]++; taken[k] > 1 {
			k += "-" + strconv.Itoa(taken[k])
		}
		out[i].Instance.Name = host + "#" + boundKey(k)
		clients[i].Inst = out[i].Instance
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(out[a].Instance.Name, out[b].Instance.Name) })
	sortedC := make([]*model.Client, len(order))
	sortedR := make([]model.InstanceResult, len(order))
	for j, i := range order {
		sortedC[j], sortedR[j] = clients[i], out[i]
	}
	copy(clients, sortedC)
	copy(out, sortedR)
}
