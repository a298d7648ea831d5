package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/engine"
	"github.com/watch-doctor/watch-doctor/internal/english"
	"github.com/watch-doctor/watch-doctor/internal/report"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

const analyzeExample = `  # Diagnose a saved capture directory (goroutine dump, APF dumps, metrics, captured-at.txt)
  kubectl watch-doctor analyze ./incident/apiserver-1

  # Two captures of the same API server: the second sample tells stuck from slow
  kubectl watch-doctor analyze ./t1 ./t2

  # A gzipped debug=2 dump from stdin, with the time it was taken
  curl -s .../debug/pprof/goroutine?debug=2 | gzip | kubectl watch-doctor analyze - --captured-at 2026-11-29T10:24:32Z

  # A bundle written by collect, as JSON for a script
  kubectl watch-doctor analyze ./bundle -o json`

// AnalyzeOptions holds the flags and resolved inputs of `analyze`.
type AnalyzeOptions struct {
	genericiooptions.IOStreams

	Output     string
	NoHeaders  bool
	FailOn     string
	CapturedAt string
	// MaxDumpSize is --max-dump-size, a quantity.
	MaxDumpSize string
	// AuditLogs are --audit-log.
	AuditLogs []string
	Paths     []string

	printer      printer
	failOn       string
	capturedAt   time.Time
	maxDumpBytes int64
}

// NewAnalyzeOptions returns options with defaults.
func NewAnalyzeOptions(streams genericiooptions.IOStreams) *AnalyzeOptions {
	return &AnalyzeOptions{IOStreams: streams, Output: string(report.FormatTable), FailOn: string(api.SeverityCritical)}
}

// NewCmdAnalyze builds `kubectl watch-doctor analyze`.
func NewCmdAnalyze(streams genericiooptions.IOStreams) *cobra.Command {
	o := NewAnalyzeOptions(streams)
	cmd := &cobra.Command{
		Use:   "analyze PATH...",
		Short: "Diagnose saved goroutine dumps, APF dumps and metrics, offline",
		Long: `Diagnose what was saved from an API server: goroutine dumps (debug=2, debug=1 or
protobuf), APF dump_requests and dump_priority_levels, /metrics, /version and
captured-at.txt, as files, directories (each directory is one capture; a
collect bundle is read with its manifest) or "-" for stdin, gzip-compressed
or not. Each file's kind is detected from its content.

Captures of the same process (equal process_start_time_seconds in their
metrics, or one instance of a collect bundle) are read as samples: a second
sample tells a stuck watch from a slow one.

` + exitCodesHelp,
		Example: analyzeExample,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	addReportOutputFlag(cmd, &o.Output, &o.NoHeaders)
	addFailOnFlag(cmd, &o.FailOn)
	cmd.Flags().StringVar(&o.CapturedAt, "captured-at", o.CapturedAt, "when the inputs were captured (RFC 3339), for a single capture without captured-at.txt")
	addAuditLogFlag(cmd, &o.AuditLogs, false)
	cmd.Flags().StringVar(&o.MaxDumpSize, "max-dump-size", o.MaxDumpSize, "the most bytes a debug=2 goroutine dump may hold (after decompression); the default, 128Mi, is twice the runtime's 64 MiB cut: raise it for a traceback saved from a crash log of a large server")
	return cmd
}

// Complete resolves flags into typed values.
func (o *AnalyzeOptions) Complete(args []string) error {
	o.Paths = args
	var err error
	if o.printer, err = toPrinter(o.Out, o.Output, o.NoHeaders, true); err != nil {
		return err
	}
	if o.failOn, err = parseFailOn(o.FailOn); err != nil {
		return err
	}
	if o.CapturedAt != "" {
		if o.capturedAt, err = time.Parse(time.RFC3339Nano, o.CapturedAt); err != nil {
			return fmt.Errorf("invalid --captured-at %q: use RFC 3339, like 2026-11-29T10:24:32Z", o.CapturedAt)
		}
	}
	if o.MaxDumpSize != "" {
		q, err := resource.ParseQuantity(o.MaxDumpSize)
		if err != nil || q.Value() < 1<<20 {
			return fmt.Errorf("invalid --max-dump-size %q: use a quantity of at least 1Mi, like 128Mi or 1Gi", o.MaxDumpSize)
		}
		o.maxDumpBytes = q.Value()
	}
	return nil
}

// Validate checks the inputs.
func (o *AnalyzeOptions) Validate() error {
	for _, p := range o.Paths {
		if strings.TrimSpace(p) == "" {
			return fmt.Errorf("empty PATH argument")
		}
	}
	return validateAuditLogs(o.AuditLogs, o.Paths)
}

// Run loads the inputs, diagnoses them and writes the report. Ctrl-C or
// SIGTERM from the start stops the diagnosis wherever it is (exit 130).
func (o *AnalyzeOptions) Run() error {
	ctx, stop := interruptContext()
	defer stop()
	logs, err := auditSources(o.AuditLogs, o.In)
	if err != nil {
		return err
	}
	loaded, err := bundle.LoadContext(ctx, o.Paths, bundle.Options{Stdin: o.In, CapturedAt: o.capturedAt, Now: time.Now(), MaxDumpBytes: o.maxDumpBytes, Words: english.Words{CapturedAt: "--captured-at", MaxDumpSize: "--max-dump-size"}})
	if err != nil {
		return err
	}
	res, err := engine.Run(ctx, engine.Config{Loaded: loaded, Diagnosis: diagnoseOptions(0), AuditLogs: logs})
	if err != nil {
		return err
	}
	// Decided before writing: the loaded captures (50,000 APF rows are
	// 40 MB) are then no longer referenced while the report is written.
	foreign := errForeign(loaded)
	r := res.Report
	if err := writeReport(o.Out, r, o.printer, o.failOn); err != nil {
		// Incomplete only because every dump is another process's: said
		// in those words.
		if inc := (*incompleteError)(nil); foreign != nil && errors.As(err, &inc) {
			return foreign
		}
		return err
	}
	if err := errNothingDiagnosed(r); err != nil {
		return err
	}
	return foreign
}

// errForeign fails a run whose every goroutine dump holds no
// kube-apiserver code: "no watch stuck" would be said of another process.
func errForeign(l *bundle.Loaded) error {
	foreign := l.Foreign()
	for _, c := range l.Captures {
		if c.Dump != nil && !c.Foreign() {
			return nil
		}
	}
	if len(foreign) == 0 {
		return nil
	}
	return fmt.Errorf("no watch-cache goroutines found: the goroutine dump of %s holds no kube-apiserver code and may be from another process; nothing was diagnosed (capture kube-apiserver's /debug/pprof/goroutine?debug=2)", strings.Join(foreign, ", "))
}

// errNothingDiagnosed fails a run in which no API server had a goroutine
// dump: its report says nothing about stuck watches, which must not pass
// for an all clear.
func errNothingDiagnosed(r *api.Report) error {
	for _, a := range r.APIServers {
		if a.DumpFormat != "" {
			return nil
		}
	}
	return fmt.Errorf("no goroutine dump among the inputs: nothing was diagnosed (capture /debug/pprof/goroutine?debug=2; kubectl watch-doctor metrics reads /metrics alone)")
}

// writeReport prints r and turns findings at or above failOn into the
// findings exit code.
func writeReport(w io.Writer, r *api.Report, p report.Printer, failOn string) error {
	if err := p.Print(w, r); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	if failOn != failOnNone && r.MaxSeverity().Rank() >= api.Severity(failOn).Rank() {
		return errFindings
	}
	if len(r.Incomplete) > 0 {
		// Undecided is not healthy: a script must not read it as all clear.
		return &incompleteError{reasons: r.Incomplete}
	}
	return nil
}

// incompleteError fails a run whose report covers only part of the
// watches, with nothing at or above --fail-on in that part.
type incompleteError struct {
	reasons []string
	hint    string
}

func (e *incompleteError) Error() string {
	msg := "incomplete: nothing at or above --fail-on in what was decided, but " + strings.Join(e.reasons, "; ")
	if e.hint != "" {
		msg += "; " + e.hint
	}
	return msg
}
