package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/watch-doctor/watch-doctor/internal/replay"
	"github.com/watch-doctor/watch-doctor/internal/replay/upstream"
	"github.com/watch-doctor/watch-doctor/internal/report"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

const replayExample = `  # The reproduction of kubernetes issue 131721 in the four columns
  kubectl watch-doctor replay issue-131721

  # A slow but progressing client: does the stall timeout leave it alone?
  kubectl watch-doctor replay slow-but-progressing -o json

  # Blocked goroutines over time, as a chart
  kubectl watch-doctor replay issue-137631 --timeline --svg timeline.svg

  # Would the stall timeout cut my curl (or client-node, kubectl) client?
  kubectl watch-doctor replay client-stacks

  # Your own scenario (format: docs/scenario.schema.json), every client on curl's stack
  kubectl watch-doctor replay ./my-scenario.yaml --transport nghttp2

  # A scenario derived from a saved bundle: one client per finding
  kubectl watch-doctor replay --from ./incident/apiserver-1

  # The built-in scenarios, and one of them as YAML to start from
  kubectl watch-doctor replay --list
  kubectl watch-doctor replay issue-131721 --print-scenario`

// Replay --fail-on values.
const (
	replayFailOnCut       = "cut"
	replayFailOnDifferent = "different"
)

var (
	replayColumns      = []string{api.ColumnUpstream, api.ColumnUnpatched, api.ColumnPR141899, api.ColumnComplete}
	replayFailOnValues = []string{failOnNone, replayFailOnCut, replayFailOnDifferent}
)

// ReplayOptions holds the flags and resolved inputs of `replay`.
type ReplayOptions struct {
	genericiooptions.IOStreams

	Output       string
	NoHeaders    bool
	Columns      []string
	StallTimeout time.Duration
	// Transport is a transport profile for every client without its own.
	Transport     string
	Timeline      bool
	SVG           string
	From          string
	List          bool
	PrintScenario bool
	FailOn        string
	MaxMemory     string
	// UpstreamRelease is the release whose cacher serves the upstream
	// column (replay_release.go).
	UpstreamRelease string

	printer  printer
	scenario *replay.Scenario
	columns  map[string]bool
	// upstreamProgram runs the upstream column of another release than
	// the in-process one, found by Validate.
	upstreamProgram string
	// releaseFromScenario: no --upstream-release, the scenario's release
	// decides (resolveRelease).
	releaseFromScenario bool
}

// NewReplayOptions returns options with defaults.
func NewReplayOptions(streams genericiooptions.IOStreams) *ReplayOptions {
	return &ReplayOptions{
		IOStreams: streams,
		Output:    string(report.FormatTable),
		Columns:   append([]string(nil), replayColumns...),
		FailOn:    failOnNone,
		MaxMemory: defaultReplayMaxMemory,

		// "": the scenario's (resolveRelease).
		UpstreamRelease: "",
	}
}

// NewCmdReplay builds `kubectl watch-doctor replay`.
func NewCmdReplay(streams genericiooptions.IOStreams) *cobra.Command {
	o := NewReplayOptions(streams)
	cmd := &cobra.Command{
		Use:   "replay [SCENARIO|FILE]",
		Short: "Replay watch clients against the watch cache: upstream, unpatched, PR 141899 and the complete fix",
		Long: `Replay a scenario (objects, updates and watch clients that read at their own
pace) in virtual time against four watch caches side by side:

  upstream   k8s.io/apiserver's cacher (v0.37.2 in process, or v0.38 with
             --upstream-release v1.38), over an in-memory
             storage that passes upstream's storage behaviour tests
  unpatched  watch-doctor's model of the same cache
  pr141899   the model with the stall timeout of kubernetes PR 141899 as its
             description states it: an initial-events watcher that makes no
             progress for --stall-timeout is stopped; its handler stays
             blocked writing, its APF seats stay held until the request ends
             and the client is not told (as measured on a patched server)
  complete   as pr141899, and the stall ends the response stream: the handler
             returns, the seats are released and the client is told

Every column serves the same clients through the same model of the request
handler and of HTTP/2 flow control, so a slow reader blocks the server's write
as it would on the wire. An hour of virtual time takes seconds.

The table shows how each client ended in each column, what each column left
behind (goroutines blocked in sendWatchCacheEvent, read from a goroutine dump of
this very process, objects they hold, APF seat-seconds) and the verdict.

SCENARIO is a built-in name (see --list) or a YAML file; --from derives one from
a bundle. ` + exitCodesHelp,
		Example: replayExample,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			cmd.SilenceUsage = true
			return o.Run(cmd.Context())
		},
	}
	addOutputFlag(cmd, &o.Output, &o.NoHeaders)
	cmd.Flags().StringSliceVar(&o.Columns, "columns", o.Columns, "columns to replay: any of "+strings.Join(replayColumns, ", "))
	cmd.Flags().DurationVar(&o.StallTimeout, "stall-timeout", o.StallTimeout, "stall timeout of the pr141899 and complete columns (default: the scenario's, 30s)")
	cmd.Flags().StringVar(&o.Transport, "transport", o.Transport, "model every client without a transport of its own with this measured client stack: "+strings.Join(transportProfiles(), ", ")+" (default: the scenario's)")
	cmd.Flags().BoolVar(&o.Timeline, "timeline", o.Timeline, "record blocked watcher goroutines per tick in every column")
	cmd.Flags().StringVar(&o.SVG, "svg", o.SVG, "write the timeline as an SVG chart to this file (implies --timeline)")
	cmd.Flags().StringVar(&o.From, "from", o.From, "derive the scenario from a bundle directory (metrics, goroutine and APF dumps, or an analyze -o json report)")
	cmd.Flags().StringVar(&o.MaxMemory, "max-memory", o.MaxMemory, "refuse a replay expected to need more memory than this (estimated from its objects, clients and columns)")
	cmd.Flags().BoolVar(&o.List, "list", o.List, "list the built-in scenarios and exit")
	cmd.Flags().BoolVar(&o.PrintScenario, "print-scenario", o.PrintScenario, "print the scenario as YAML and exit, without replaying it")
	cmd.Flags().StringVar(&o.FailOn, "fail-on", o.FailOn, "exit 1 when: "+replayFailOnCut+" (the stall timeout stops a client that completes without it), "+replayFailOnDifferent+" (upstream and unpatched disagree), or "+failOnNone)
	cmd.Flags().StringVar(&o.UpstreamRelease, "upstream-release", o.UpstreamRelease, "the release the replay models: whose k8s.io/apiserver cacher serves the upstream column, "+upstreamReleaseInProcess+" (v0.37.2, in process) or "+upstreamReleaseV138+" (v0.38.0-beta.0, run by kubectl-watch_doctor-replay-v1.38, built with make replay-v1.38), and whose watcher loop the other columns model (default: the scenario's release, "+replay.DefaultRelease+" unless it says otherwise)")
	return cmd
}

// Complete resolves the output format and the scenario.
func (o *ReplayOptions) Complete(args []string) error {
	var err error
	if o.printer, err = toPrinter(o.Out, o.Output, o.NoHeaders, false); err != nil {
		return err
	}
	if o.List {
		return nil
	}
	switch {
	case o.From != "" && len(args) > 0:
		return fmt.Errorf("both a scenario %q and --from %q given: use one", args[0], o.From)
	case o.From != "":
		o.scenario, err = scenarioFromDir(o.From, o.ErrOut)
	case len(args) == 0:
		return fmt.Errorf("no scenario: name a built-in one (%s), a YAML file, or use --from DIR", strings.Join(replay.BuiltinNames(), ", "))
	default:
		o.scenario, err = loadScenario(args[0])
	}
	if err != nil {
		return err
	}
	if err := o.resolveRelease(); err != nil {
		return err
	}
	if o.StallTimeout != 0 {
		o.scenario.StallTimeout = &replay.Duration{Duration: o.StallTimeout}
	}
	if o.Transport != "" {
		p, err := replay.ParseProfile(o.Transport)
		if err != nil {
			return fmt.Errorf("invalid --transport: %w", err)
		}
		if err := o.scenario.SetTransportProfile(p); err != nil {
			return fmt.Errorf("invalid --transport: %w", err)
		}
	}
	o.columns = map[string]bool{}
	for _, c := range o.Columns {
		o.columns[strings.TrimSpace(c)] = true
	}
	if o.SVG != "" {
		o.Timeline = true
	}
	return nil
}

// scenarioInfo is one row of --list.
// list prints the built-in scenarios in the --output format.
func (o *ReplayOptions) list() error {
	var rows report.ScenarioList
	for _, n := range replay.BuiltinNames() {
		sc, err := replay.Builtin(n)
		if err != nil {
			return err
		}
		clients := 0
		for _, c := range sc.Clients {
			clients += c.Count
		}
		rows = append(rows, report.ScenarioInfo{Name: n, Duration: sc.Duration.String(), Clients: clients, Description: sc.Description})
	}
	return o.printer.Print(o.Out, rows)
}

// checkSVG refuses an --svg that cannot be written before the replay runs
// (it can take minutes), and "-": stdout carries the report.
func checkSVG(path string) error {
	if path == "" {
		return nil
	}
	if path == "-" {
		return fmt.Errorf("invalid --svg %q: stdout carries the report; name a file, like --svg timeline.svg", path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("invalid --svg %q: directory %q: %w", path, dir, unwrapPathError(err))
	case !st.IsDir():
		return fmt.Errorf("invalid --svg %q: %q is not a directory", path, dir)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("invalid --svg %q: it is a directory; name a file inside it", path)
	}
	return nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Validate checks the flags.
func (o *ReplayOptions) Validate() error {
	if o.List {
		return nil
	}
	if err := checkSVG(o.SVG); err != nil {
		return err
	}
	if o.StallTimeout < 0 {
		return fmt.Errorf("invalid --stall-timeout %v: use a positive duration such as 30s", o.StallTimeout)
	}
	if err := validateUpstreamRelease(o.UpstreamRelease); err != nil {
		return err
	}
	if o.columns[api.ColumnUpstream] && o.UpstreamRelease != upstreamReleaseInProcess && !o.PrintScenario {
		var err error
		if o.upstreamProgram, err = upstreamProgram(o.UpstreamRelease); err != nil {
			if !o.releaseFromScenario || len(o.columns) == 1 {
				return err
			}
			// A scenario of another release (a built-in one too) still
			// replays our columns, which model its release, when the
			// program of its upstream column is not installed.
			fmt.Fprintf(o.ErrOut, "note: scenario %q models %s: %v\nnote: replaying it without the upstream column\n", o.scenario.Name, o.UpstreamRelease, err)
			delete(o.columns, api.ColumnUpstream)
		}
	}
	if len(o.columns) == 0 {
		return fmt.Errorf("no --columns: use any of %s", strings.Join(replayColumns, ", "))
	}
	for c := range o.columns {
		ok := false
		for _, v := range replayColumns {
			ok = ok || c == v
		}
		if !ok {
			return fmt.Errorf("unsupported --columns %q: use any of %s", c, strings.Join(replayColumns, ", "))
		}
	}
	ok := false
	for _, v := range replayFailOnValues {
		ok = ok || o.FailOn == v
	}
	if !ok {
		return fmt.Errorf("unsupported --fail-on %q: use one of %s", o.FailOn, strings.Join(replayFailOnValues, ", "))
	}
	if o.PrintScenario {
		return nil
	}
	return checkReplayMemory(o.ErrOut, o.scenario, o.columns, o.MaxMemory)
}

// Run replays the scenario and writes the report.
func (o *ReplayOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.List {
		return o.list()
	}
	if o.PrintScenario {
		b, err := o.scenario.Marshal()
		if err != nil {
			return err
		}
		_, err = o.Out.Write(b)
		return err
	}
	var backends []replay.Backend
	if o.columns[api.ColumnUpstream] && o.UpstreamRelease == upstreamReleaseInProcess {
		backends = append(backends, upstream.New())
	}
	if o.columns[api.ColumnUnpatched] {
		backends = append(backends, replay.NewOurs(api.ColumnUnpatched, 0))
	}
	if o.columns[api.ColumnPR141899] {
		backends = append(backends, replay.NewOurs(api.ColumnPR141899, o.scenario.StallTimeout.Duration))
	}
	if o.columns[api.ColumnComplete] {
		backends = append(backends, replay.NewOursComplete(o.scenario.StallTimeout.Duration))
	}
	res, err := replay.Run(ctx, o.scenario, backends, replay.Options{Timeline: o.Timeline, Progress: o.ErrOut})
	if err != nil {
		return err
	}
	if o.upstreamProgram != "" {
		up, err := runUpstreamRelease(ctx, o.UpstreamRelease, o.upstreamProgram, o.scenario, o.Timeline, o.ErrOut)
		if err != nil {
			return err
		}
		if err := replay.Prepend(res, up); err != nil {
			return fmt.Errorf("the %s upstream column: %w", o.UpstreamRelease, err)
		}
	}
	if err := o.printer.Print(o.Out, res); err != nil {
		return err
	}
	if o.SVG != "" {
		var b bytes.Buffer
		if err := report.WriteReplaySVG(&b, res); err != nil {
			if errors.Is(err, report.ErrNoTimeline) {
				return fmt.Errorf("%w: run the replay with --timeline", err)
			}
			return err
		}
		if err := os.WriteFile(o.SVG, b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("writing --svg %q: %w", o.SVG, err)
		}
		fmt.Fprintf(o.ErrOut, "timeline chart written to %s\n", o.SVG)
	}
	switch {
	case o.FailOn == replayFailOnCut && len(res.Verdict.Cut) > 0:
		return errFindings
	case o.FailOn == replayFailOnDifferent && res.Verdict.Fidelity == "different":
		return errFindings
	}
	return nil
}
