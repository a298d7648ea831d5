package report

import (
	"fmt"
	"io"

	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// RenderMetrics writes the watch metrics of one or more API servers in
// format f.
//
// The table shows per server a summary line, the resources that have
// watchers or watch-cache activity (wide: all resources, more columns), the
// priority levels, and below them the blind spots of the columns, the
// missing and unknown metrics, and notes. With two samples the counter
// columns become rates per second.
func RenderMetrics(w io.Writer, r metrics.Report, f Format) error {
	switch f {
	case FormatJSON, FormatYAML:
		return writeStructured(w, r.Document(), f)
	case FormatTable, FormatWide:
		return renderMetricsTable(escapeWriter{w}, r, f == FormatWide)
	}
	return fmt.Errorf("unsupported format %q: use one of table, wide, json, yaml", f)
}
