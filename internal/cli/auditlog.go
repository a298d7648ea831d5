package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/engine"
)

// auditLogHelp is the part of --audit-log's help every command shares.
const auditLogHelp = `an API server audit log (upstream JSON lines, or a managed provider's export, plain or gzipped: docs/diagnose.md lists them; "-" for stdin), repeatable; read after the last sample`

// addAuditLogFlag binds --audit-log of diagnose and analyze.
func addAuditLogFlag(cmd *cobra.Command, p *[]string, contexts bool) {
	help := auditLogHelp + `: each finding's watch request, and each candidate's, is joined to its event (same user and path, received within 2s of its APF start) for its source address, user agent and, live, pod`
	if contexts {
		help += `; with --contexts or --all-contexts give CONTEXT=FILE, a log per context`
	}
	cmd.Flags().StringArrayVar(p, "audit-log", *p, help)
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

// auditSources are the audit logs named, for the engine to read at the
// end of the run: "-" is stdin, anything else a file, refused now unless
// it is a regular file (a named pipe would hang the run), or in no known
// form (the engine looks at its head: before the first sample, not after
// the sampling window).
func auditSources(paths []string, stdin io.Reader) ([]bundle.AuditSource, error) {
	var out []bundle.AuditSource
	for _, p := range paths {
		if p == "-" {
			out = append(out, bundle.AuditStream("<stdin>", stdin))
			continue
		}
		if err := bundle.CheckAuditFile(p); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("invalid --audit-log %q: %w", p, pe.Err)
			}
			return nil, fmt.Errorf("invalid --audit-log: %w", err)
		}
		out = append(out, bundle.AuditFile(p))
	}
	if err := engine.CheckAuditLogs(context.Background(), out); err != nil {
		return nil, err
	}
	return out, nil
}

// contextAuditLogs splits --audit-log CONTEXT=FILE per context of a
// fleet run: a value without CONTEXT=, or naming a context not read, is
// an error.
func contextAuditLogs(logs, contexts []string, stdin io.Reader) (map[string][]bundle.AuditSource, error) {
	known := map[string]bool{}
	for _, c := range contexts {
		known[c] = true
	}
	out := map[string][]bundle.AuditSource{}
	for _, v := range logs {
		name, file, ok := strings.Cut(v, "=")
		if !ok || name == "" || file == "" {
			return nil, fmt.Errorf("invalid --audit-log %q: with --contexts or --all-contexts give CONTEXT=FILE, as --audit-log prod=audit.log", v)
		}
		if !known[name] {
			list := append([]string(nil), contexts...)
			sort.Strings(list)
			return nil, fmt.Errorf("invalid --audit-log %q: context %q is not read: use one of %s", v, name, strings.Join(list, ", "))
		}
		src, err := auditSources([]string{file}, stdin)
		if err != nil {
			return nil, err
		}
		out[name] = append(out[name], src...)
	}
	return out, nil
}

// contextLogFiles are the files of --audit-log CONTEXT=FILE values, for
// the stdin check; a value without "=" stands for itself.
func contextLogFiles(logs []string) []string {
	out := make([]string, len(logs))
	for i, v := range logs {
		if _, file, ok := strings.Cut(v, "="); ok {
			v = file
		}
		out[i] = v
	}
	return out
}
