// Package metrics reads the watch health of a kube-apiserver from its
// Prometheus /metrics text: per-resource watchers and watch cache counters,
// APF seats per priority level, and process totals.
//
// The pipeline has three stages, each usable alone:
//
//	Parse   text exposition -> *Sample (github.com/prometheus/common/expfmt)
//	Extract *Sample -> *Snapshot (the watch model; release-aware)
//	Rates   two *Snapshots -> *RateSnapshot (per-second, reset-safe)
//
// Metric names and labels changed between Kubernetes releases 1.30 and 1.37
// (for example the watch cache metrics' "resource" label became
// "group","resource" in 1.34). The mapping is data (Catalog), read from
// k8s.io/apiserver's source of each release; Extract detects the release
// from kubernetes_build_info or from the names and labels present, and
// ExtractRelease takes it as given.
//
// Absent values are NaN in the model (see Absent), never 0: a metric the
// server does not expose cannot pass for a zero. Every catalog metric with
// no series is listed in Snapshot.Missing with the reason, and watch-related
// families or label sets the catalog does not know in Snapshot.Unknown.
//
// This package does no I/O of its own: it reads from an io.Reader and the
// caller fetches.
package metrics
