// Package v1alpha1 is watch-doctor's output contract: the documents the
// tool writes as JSON or YAML, as plain Go types, and nothing else. It
// parses no input format, reads no cluster and renders no table; the
// engines (internal/watches, pkg/metrics, internal/replay, internal/bundle, internal/live)
// return these types and internal/report renders them, as pprof's profile
// package holds the profile that its drivers fill and its reports draw.
//
// Every document carries apiVersion GroupVersion and one of the kinds:
//
//	KindReport        Report        analyze, diagnose: findings per watch
//	KindFleetReport   FleetReport   diagnose over several contexts: a Report each
//	KindWatchMetrics  WatchMetrics  metrics: watch health read from /metrics
//	KindReplay        Replay        replay: a workload with and without the fix
//	KindManifest      Manifest      collect: the manifest.json of a bundle
//
// The JSON field names are the contract: within GroupVersion fields are
// only added. docs/schemas holds a JSON Schema per document, generated from
// these types (internal/schematest), against which every golden validates.
//
// Severity, FindingType, Match, Phase and Outcome are typed strings with
// their values as constants; compare against the constants.
//
// The types are plain values with no locks: safe to read from several
// goroutines once built, not to build concurrently.
package v1alpha1

// GroupVersion is the apiVersion of every document of this package.
const GroupVersion = "watchdoctor/v1alpha1"
