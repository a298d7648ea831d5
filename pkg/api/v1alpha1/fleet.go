package v1alpha1

// KindFleetReport is the kind of a report over several clusters.
const KindFleetReport = "FleetReport"

// FleetReport is the outcome of diagnose over several kubeconfig contexts.
// Field names in JSON/YAML are a contract within watchdoctor/v1alpha1:
// clusters[] (context, cluster, server, report or error) and summary.
type FleetReport struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Clusters   []ClusterReport `json:"clusters"`
	Summary    FleetSummary    `json:"summary"`
}

// ClusterReport is what was read of one context: its report (possibly
// partial) and the error that stopped or degraded it.
type ClusterReport struct {
	// Context is the kubeconfig context; Cluster and Server what it names.
	Context string  `json:"context"`
	Cluster string  `json:"cluster,omitempty"`
	Server  string  `json:"server,omitempty"`
	Report  *Report `json:"report,omitempty"`
	// Error is set when the cluster could not be read fully (the report,
	// if any, covers what was read).
	Error string `json:"error,omitempty"`
}

// FleetSummary totals the clusters' reports.
type FleetSummary struct {
	Clusters     int `json:"clusters"`
	Failed       int `json:"failed"`
	StuckWatches int `json:"stuckWatches"`
	SlowWatches  int `json:"slowWatches"`
	StuckSeats   int `json:"stuckSeats"`
}

// NewFleetReport totals clusters into a report.
func NewFleetReport(clusters []ClusterReport) *FleetReport {
	fr := &FleetReport{APIVersion: GroupVersion, Kind: KindFleetReport, Clusters: clusters}
	fr.Summary.Clusters = len(clusters)
	for _, c := range clusters {
		if c.Error != "" {
			fr.Summary.Failed++
		}
		if c.Report != nil {
			fr.Summary.StuckWatches += c.Report.Summary.StuckWatches
			fr.Summary.SlowWatches += c.Report.Summary.SlowWatches
			fr.Summary.StuckSeats += c.Report.Summary.StuckSeats
		}
	}
	return fr
}
