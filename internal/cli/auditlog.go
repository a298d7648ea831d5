package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/audit"
)

// addAuditLogFlag binds --audit-log.
func addAuditLogFlag(cmd *cobra.Command, p *[]string) {
	cmd.Flags().StringArrayVar(p, "audit-log", *p, `an API server audit log (JSON lines of audit.k8s.io/v1 Event, plain or gzipped; "-" for stdin), repeatable: each finding's watch request is joined to its event (same user and path, received within 2s of its APF start) for its source address and user agent`)
}

// validateAuditLogs refuses stdin named twice (by --audit-log and by a
// PATH of analyze).
func validateAuditLogs(logs, paths []string) error {
	stdin := 0
	for _, p := range append(append([]string(nil), logs...), paths...) {
		if p == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return fmt.Errorf(`"-" (stdin) given more than once among PATH and --audit-log: stdin can be read once`)
	}
	return nil
}

// readAuditLogs reads the audit logs named, each within
// audit.DefaultLimits, and returns their watch requests and a warning per
// log with skipped lines.
func readAuditLogs(paths []string, stdin io.Reader) ([]audit.Event, []string, error) {
	var events []audit.Event
	var warnings []string
	for _, p := range paths {
		l, err := readAuditLog(p, stdin)
		if err != nil {
			return nil, nil, fmt.Errorf("reading --audit-log: %w", err)
		}
		if n := len(l.Skipped); n > 0 {
			warnings = append(warnings, fmt.Sprintf("--audit-log %s: %d lines skipped (first at line %d: %s)", displayName(p), n, l.Skipped[0].Line, l.Skipped[0].Reason))
		}
		events = append(events, l.Events...)
	}
	return events, warnings, nil
}

func readAuditLog(p string, stdin io.Reader) (*audit.Log, error) {
	if p == "-" {
		return audit.Read(stdin, "<stdin>", audit.DefaultLimits())
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%q is not a regular file", p)
	}
	return audit.Read(f, p, audit.DefaultLimits())
}

func displayName(p string) string {
	if p == "-" {
		return "<stdin>"
	}
	return fmt.Sprintf("%q", p)
}

// storeAuditLogs keeps the watch requests of each audit log read in the
// bundle, and returns the manifest's record of them.
func storeAuditLogs(dir *bundle.Dir, paths []string, logs []*audit.Log) ([]api.AuditLogCopy, error) {
	var out []api.AuditLogCopy
	for i, l := range logs {
		var buf bytes.Buffer
		if err := audit.Write(&buf, l.Events); err != nil {
			return out, err
		}
		source := paths[i]
		if source == "-" {
			source = "stdin"
		}
		file, err := dir.StoreAudit(source, &buf)
		if err != nil {
			return out, err
		}
		out = append(out, api.AuditLogCopy{Source: source, File: file, Watches: len(l.Events), Lines: l.Lines})
	}
	return out, nil
}
