package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/clock"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/engine"
	"github.com/watch-doctor/watch-doctor/internal/live"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	"github.com/watch-doctor/watch-doctor/internal/report"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

const collectExample = `  # Save two samples of every API server for later, or for a support ticket
  kubectl watch-doctor collect -d ./incident-2026-11-29

  # Then, anywhere, without the cluster
  kubectl watch-doctor analyze ./incident-2026-11-29`

// CollectOptions holds the flags of `collect`.
type CollectOptions struct {
	genericiooptions.IOStreams
	LiveOptions

	Dir string
	// AuditLogs are --audit-log: their watch requests are kept in the
	// bundle (bundle.AuditDir), for analyze.
	AuditLogs []string
}

// NewCollectOptions returns options with defaults.
func NewCollectOptions(streams genericiooptions.IOStreams) *CollectOptions {
	return &CollectOptions{IOStreams: streams, LiveOptions: newLiveOptions()}
}

// NewCmdCollect builds `kubectl watch-doctor collect`.
func NewCmdCollect(streams genericiooptions.IOStreams) *cobra.Command {
	return newCmdCollect(streams, nil)
}

func newCmdCollect(streams genericiooptions.IOStreams, clk clock.Clock) *cobra.Command {
	o := NewCollectOptions(streams)
	cmd := &cobra.Command{
		Use:   "collect -d DIR",
		Short: "Save what diagnose reads, per API server instance and sample, for analyze",
		Long: `Fetch what diagnose reads from each API server instance and write it, raw, to
DIR/<instance>/sample-<n>/ (goroutine-debug2.txt, metrics.txt,
apf-requests.txt, apf-priority-levels.txt, version.json, captured-at.txt),
the execution trace taken between the samples (when --evidence chose one) to
DIR/<instance>/trace.out, with DIR/manifest.json describing every fetch and
what the run cost each instance. Nothing else is written.
"kubectl watch-doctor analyze DIR" gives the report diagnose would have given.

` + exitCodesHelp,
		Example: collectExample,
		Args:    cobra.NoArgs,
	}
	bindLive(cmd, &o.LiveOptions, clk, o.ErrOut, o)
	cmd.Flags().StringVarP(&o.Dir, "dir", "d", o.Dir, "directory to write the bundle to (created; must be empty if it exists)")
	cmd.Flags().StringArrayVar(&o.AuditLogs, "audit-log", o.AuditLogs, auditLogHelp+`: its watch requests are kept in DIR/`+bundle.AuditDir+`/ (as upstream JSON lines), where analyze joins them to the findings as --audit-log does`)
	return cmd
}

// Complete has nothing to resolve beyond the flags.
func (o *CollectOptions) Complete() error { return nil }

// Validate checks the flags and that the directory can take a bundle.
func (o *CollectOptions) Validate() error {
	if o.Dir == "" {
		return errors.New("--dir is required: where to write the bundle")
	}
	if err := o.LiveOptions.validate(); err != nil {
		return err
	}
	if err := validateAuditLogs(o.AuditLogs, nil); err != nil {
		return err
	}
	entries, err := os.ReadDir(o.Dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("invalid --dir %q: %w", o.Dir, err)
	case len(entries) > 0:
		return fmt.Errorf("invalid --dir %q: the directory is not empty; use a new one so bundles never mix", o.Dir)
	}
	return nil
}

// createBundleFile is how collect creates the bundle's files; nil is the
// operating system's (tests inject a full or read-only disk).
var createBundleFile func(path string) (bundle.File, error)

// Run claims the directory, fetches and writes the bundle.
func (o *CollectOptions) Run() error {
	// Refused before anything is fetched; read after the last sample.
	logs, err := auditSources(o.AuditLogs, o.In)
	if err != nil {
		return err
	}
	cfg, err := o.engineConfig(o.ErrOut)
	if err != nil {
		return err
	}
	cfg.AuditLogs = logs
	dir := &bundle.Dir{Root: o.Dir, Create: createBundleFile}
	// The claim is the first write: a directory another collect writes,
	// or one that cannot be written, fails here, before any fetch.
	if err := dir.Claim(); err != nil {
		return fmt.Errorf("invalid --dir: %w", err)
	}
	ctx, cancel := signalContext()
	defer cancel()
	target := &failFast{t: dir, cancel: cancel}
	cfg.Raw = target
	out, runErr := engine.Run(ctx, cfg)
	res := out.Run
	// An audit log that could not be read leaves the bundle whole, and
	// fails the run at its end.
	var auditErr *engine.AuditError
	if errors.As(runErr, &auditErr) {
		runErr = nil
	}
	writeErr := target.failed()
	if writeErr == nil && runErr != nil && (res == nil || ctx.Err() == nil) {
		return runErr
	}
	if writeErr != nil && res == nil {
		return fmt.Errorf("writing the bundle: %w", writeErr)
	}
	// Interrupted (or a write failed): what was read still makes a valid
	// bundle.
	m := api.Manifest{CreatedAt: cfg.Live.Clock.Now().UTC(), Tool: "kubectl-watch_doctor " + versionString(), Server: model.RedactServer(cfg.Live.REST.Host)}
	if o.ConfigFlags.Context != nil {
		m.Context = *o.ConfigFlags.Context
	}
	m.AuditLogs = out.AuditLogs
	if err := dir.Finish(res.Manifest(m)); err != nil {
		return fmt.Errorf("writing the bundle: %w", errors.Join(writeErr, err))
	}
	if writeErr != nil {
		return fmt.Errorf("writing the bundle: %w: collect stopped at the first failed write", writeErr)
	}
	errs := out.Errors
	printErrors(o.ErrOut, errs, refused(res))
	if len(o.AuditLogs) > 0 && len(out.AuditLogs) == 0 && runErr != nil && auditErr == nil {
		fmt.Fprintf(o.ErrOut, "warning: --audit-log not kept: the run ended before its last sample, and the logs are read after it\n")
	}
	for _, w := range out.Withheld {
		fmt.Fprintf(o.ErrOut, "warning: %s\n", report.Escape(withheldWords(w, o.MaxPause)))
	}
	samples := 0
	for _, ir := range res.Instances {
		samples += len(ir.Samples)
	}
	if sig := wasInterrupted(); sig != nil {
		failed, cut := res.Counts()
		fmt.Fprintf(o.ErrOut, "wrote %s, interrupted (%v): %d instance(s), %d sample(s), %d request(s) cut short, %d failed; read it with: kubectl watch-doctor analyze %s\n", o.Dir, sig, len(res.Instances), samples, cut, failed, o.Dir)
	} else {
		fmt.Fprintf(o.ErrOut, "wrote %s: %d instance(s), %d sample(s), %d failed request(s); read it with: kubectl watch-doctor analyze %s\n", o.Dir, len(res.Instances), samples, len(errs), o.Dir)
	}
	printSummary(o.Out, o.Dir, res)
	if runErr != nil {
		return runErr
	}
	if auditErr != nil {
		return fmt.Errorf("--audit-log not kept: %w", auditErr)
	}
	if err := errIncomplete(errs); err != nil {
		return err
	}
	if c := res.Coverage; c.Live > 0 && c.Read < c.Live {
		return fmt.Errorf("incomplete: %s: a stuck watch on an instance not read is not in this bundle", c.Text())
	}
	return nil
}

// failFast is collect's target: the first write that fails (a full disk)
// ends the run at once, so no more is fetched, the stop-the-world debug=2
// dump included, for a bundle that cannot hold it.
type failFast struct {
	t      *bundle.Dir
	cancel func()
	mu     sync.Mutex
	err    error
}

// Store implements model.Target.
func (f *failFast) Store(instance string, sample int, kind api.FileKind, body io.Reader) error {
	if err := f.failed(); err != nil {
		return err
	}
	rb := &readCheck{r: body}
	err := f.t.Store(instance, sample, kind, rb)
	return f.fail(err, rb)
}

// fail ends the run at err, a failed write; a failure to read the body
// (the server's answer over its bound, a timeout) is the fetch's alone,
// returned as it is: the sample's other fetches go on.
func (f *failFast) fail(err error, rb *readCheck) error {
	if err == nil {
		return nil
	}
	if rb.err != nil {
		return rb.err
	}
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
	f.cancel()
	return err
}

// readCheck keeps the error of reading a body, other than its end.
type readCheck struct {
	r   io.Reader
	err error
}

func (c *readCheck) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		c.err = err
	}
	return n, err
}

// StoreAudit implements engine.AuditTarget, with the same first-failure
// rule as Store.
func (f *failFast) StoreAudit(name string, body io.Reader) (string, error) {
	if err := f.failed(); err != nil {
		return "", err
	}
	rb := &readCheck{r: body}
	file, err := f.t.StoreAudit(name, rb)
	return file, f.fail(err, rb)
}

// StoreTrace implements model.TraceTarget: the instance's trace.out, with
// the same first-failure rule as Store.
func (f *failFast) StoreTrace(instance string, body io.Reader) error {
	if err := f.failed(); err != nil {
		return err
	}
	rb := &readCheck{r: body}
	err := f.t.StoreTrace(instance, rb)
	return f.fail(err, rb)
}

func (f *failFast) failed() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// printSummary lists what was written, on stdout (the command's output).
func printSummary(w io.Writer, dir string, res *live.Result) {
	for _, ir := range res.Instances {
		for _, s := range ir.Samples {
			ok := 0
			for _, f := range s.Fetches {
				if f.Error == "" {
					ok++
				}
			}
			fmt.Fprintf(w, "%s/%s\t%d/%d files\t%s\n", dir, s.Dir, ok, len(s.Fetches), s.CapturedAt.Format(time.RFC3339))
		}
	}
}
