package bundle

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/pkg/apf"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
	"github.com/watch-doctor/watch-doctor/pkg/watches"
)

// Capture is what was captured of one API server at one time: the files
// of one directory, the files named on the command line in one directory,
// or stdin.
type Capture struct {
	// Name is how messages refer to the capture: its directory as given.
	Name string
	// CapturedAt is when the goroutine dump was taken (zero: unknown) and
	// CapturedAtSource says where that came from.
	CapturedAt       time.Time
	CapturedAtSource string
	// Instance and Manifest are set for captures of a collect bundle.
	Instance string
	// Mixed says why the capture's inputs may come from different API
	// server processes; empty when they come from one.
	Mixed string
	// Withheld says what a debug=2 dump would have cost when it was not
	// taken for the pause budget (see Sample.Withheld).
	Withheld string
	manifest string

	Dump     *watches.Dump
	Requests *apf.Requests
	Levels   []apf.PriorityLevel
	Metrics  *metrics.Snapshot
	// MetricsSample is the parsed /metrics the snapshot came from, for
	// callers that read families the watch model does not keep.
	MetricsSample *metrics.Sample
	// MetricsAt is when /metrics was read (the server's Date header, else
	// the fetch's start), from a collect bundle's manifest; zero otherwise.
	MetricsAt time.Time
	Version   string

	files    map[Kind]string
	notes    []string
	warnings []string
	// foreign is set when the goroutine dump holds no kube-apiserver code.
	foreign bool
}

// Foreign reports whether the capture's goroutine dump holds no
// kube-apiserver code (k8s.io/apiserver frames): it may be from another
// process, and saying "no watch stuck" of it would be wrong.
func (c *Capture) Foreign() bool { return c.Dump != nil && c.foreign }

func aggregatedAPIServer(a *stacks.Aggregated) bool {
	for _, st := range a.Stacks {
		if hasAPIServerFrame(st.Frames) {
			return true
		}
	}
	return false
}

// Warnings are what reading the capture's inputs skipped.
func (c *Capture) Warnings() []string { return c.warnings }

// Files lists the capture's inputs by kind.
func (c *Capture) Files() map[Kind]string { return c.files }

// Loaded is the result of Load.
type Loaded struct {
	Captures []*Capture
	// Warnings say what was skipped or could not be used.
	Warnings []string
}

// Options tune Load.
type Options struct {
	// Stdin is read for the path "-".
	Stdin io.Reader
	// CapturedAt overrides the capture time; it applies only when the
	// inputs form a single capture.
	CapturedAt time.Time
	// Now is the current time, to refuse capture times in the future;
	// zero skips that check.
	Now time.Time
}

// Load reads paths: files, directories (walked; every directory holding
// recognised files is one capture) and "-" for stdin. A named file that
// cannot be read or recognised is an error; an unrecognised file met
// while walking a directory is skipped with a warning.
func Load(paths []string, opts Options) (*Loaded, error) {
	l := &Loaded{}
	byDir := map[string]*Capture{}
	var order []string
	capture := func(key, name string) *Capture {
		if c, ok := byDir[key]; ok {
			return c
		}
		c := NewCapture(name, "", time.Time{}, "")
		byDir[key] = c
		order = append(order, key)
		return c
	}
	// The files named on the command line, and stdin, are one capture: the
	// user put them together.
	const explicitKey = "\x00explicit"
	explicitName := ""
	var manifests []string
	stdinUsed := false
	given := map[string]bool{}
	for _, p := range paths {
		if p != "-" {
			clean := filepath.Clean(p)
			if given[clean] {
				l.Warnings = append(l.Warnings, fmt.Sprintf("%q given twice: read once", p))
				continue
			}
			given[clean] = true
		}
		if p == "-" {
			if stdinUsed {
				return nil, errors.New("\"-\" (stdin) given twice")
			}
			stdinUsed = true
			if opts.Stdin == nil {
				return nil, errors.New("\"-\": no standard input")
			}
			explicitName = mergeName(explicitName, "-")
			if err := loadReader(capture(explicitKey, ""), "-", "<stdin>", opts.Stdin, &manifests); err != nil {
				return nil, err
			}
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("reading %q: %w", p, unwrapPathErr(err))
		}
		if !st.IsDir() {
			explicitName = mergeName(explicitName, filepath.Dir(p))
			if err := loadFile(capture(explicitKey, ""), p, &manifests); err != nil {
				return nil, err
			}
			continue
		}
		// A symlink to a directory is read as the directory it names.
		root, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, fmt.Errorf("reading %q: %w", p, unwrapPathErr(err))
		}
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			shown := filepath.Join(p, strings.TrimPrefix(path, root))
			if err != nil {
				l.Warnings = append(l.Warnings, fmt.Sprintf("skipped %s: %v", shown, unwrapPathErr(err)))
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 {
				// Files behind links are read; linked directories are not
				// followed (no loops).
				st, err := os.Stat(path)
				switch {
				case err != nil:
					l.Warnings = append(l.Warnings, fmt.Sprintf("skipped %s: %v", shown, unwrapPathErr(err)))
					return nil
				case st.IsDir():
					l.Warnings = append(l.Warnings, fmt.Sprintf("skipped %s: a link to a directory is not followed; name it on the command line", shown))
					return nil
				case !st.Mode().IsRegular():
					l.Warnings = append(l.Warnings, fmt.Sprintf("skipped %s: not a regular file", shown))
					return nil
				}
			} else if !d.Type().IsRegular() {
				l.Warnings = append(l.Warnings, fmt.Sprintf("skipped %s: not a regular file", shown))
				return nil
			}
			dir := filepath.Dir(shown)
			err = loadFile(capture(dir, dir), path, &manifests)
			if errors.Is(err, ErrUnknownKind) {
				l.Warnings = append(l.Warnings, fmt.Sprintf("skipped %s: %v", shown, errors.Unwrap(err)))
				return nil
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	if c, ok := byDir[explicitKey]; ok {
		c.Name = explicitName
	}
	for _, dir := range order {
		c := byDir[dir]
		if len(c.files) == 0 {
			continue
		}
		if c.Dump == nil && c.Requests == nil && c.Metrics == nil && c.Levels == nil {
			// Only version or capture time: not a capture of its own.
			l.Warnings = append(l.Warnings, fmt.Sprintf("skipped %s: no goroutine dump, APF dump or metrics", dir))
			continue
		}
		l.Captures = append(l.Captures, c)
	}
	for _, m := range manifests {
		if err := applyManifest(l, m); err != nil {
			return nil, err
		}
	}
	var unkeyed []*Capture
	for _, c := range l.Captures {
		l.Warnings = append(l.Warnings, c.Warnings()...)
		if c.Instance == "" && c.Dump != nil && (c.Metrics == nil || math.IsNaN(c.Metrics.ProcessStartTime)) {
			unkeyed = append(unkeyed, c)
		}
	}
	if len(unkeyed) > 1 {
		l.Warnings = append(l.Warnings, fmt.Sprintf("%s carry no process_start_time_seconds (no /metrics): each is read as an API server of its own; add each capture's metrics.txt to read captures of one process as samples", captureNames(unkeyed)))
	}
	if len(l.Captures) == 0 {
		msg := fmt.Sprintf("no goroutine dump, APF dump or metrics found in %s", strings.Join(quoteAll(paths), ", "))
		if len(l.Warnings) > 0 {
			msg += " (" + strings.Join(l.Warnings, "; ") + ")"
		}
		return nil, errors.New(msg)
	}
	if !opts.CapturedAt.IsZero() {
		if len(l.Captures) > 1 {
			return nil, fmt.Errorf("--captured-at applies to a single capture, but the inputs hold %d (%s): give each directory a captured-at.txt instead", len(l.Captures), captureNames(l.Captures))
		}
		l.Captures[0].CapturedAt, l.Captures[0].CapturedAtSource = opts.CapturedAt, "--captured-at"
	}
	for _, c := range l.Captures {
		if err := c.checkCaptureTime(opts.Now); err != nil {
			return nil, err
		}
		if w := c.dropLaterRequests(); w != "" {
			l.Warnings = append(l.Warnings, w)
		}
		if c.Foreign() {
			l.Warnings = append(l.Warnings, ForeignWarning(c.Name))
		}
	}
	l.Warnings = append(l.Warnings, l.orderWarnings()...)
	return l, nil
}

// mergeName names the capture of the files given on the command line: their
// directory when they share one.
func mergeName(cur, dir string) string {
	switch {
	case cur == "":
		return dir
	case cur == dir:
		return cur
	}
	return "command line"
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

func captureNames(cs []*Capture) string {
	var ns []string
	for _, c := range cs {
		ns = append(ns, c.Name)
	}
	return strings.Join(ns, ", ")
}

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func loadFile(c *Capture, path string, manifests *[]string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading %q: %w", path, unwrapPathErr(err))
	}
	defer f.Close()
	return loadReader(c, path, path, f, manifests)
}

// loadReader detects and parses one input into c. name is used in errors.
func loadReader(c *Capture, path, name string, r io.Reader, manifests *[]string) error {
	kind, br, err := Open(r)
	if err != nil {
		if errors.Is(err, ErrUnknownKind) {
			return fmt.Errorf("%s: %w", name, err)
		}
		return fmt.Errorf("%s: %v", name, err)
	}
	if kind == KindManifest {
		*manifests = append(*manifests, path)
		return nil
	}
	return c.Read(kind, name, br)
}

// NewCapture returns an empty capture of the given API server instance
// (empty for a capture read from files), for callers that fetch inputs
// themselves and hand them to Read.
func NewCapture(name, instance string, capturedAt time.Time, source string) *Capture {
	return &Capture{Name: name, Instance: instance, CapturedAt: capturedAt, CapturedAtSource: source, files: map[Kind]string{}}
}

// Read parses one input of a known kind into c; name is used in errors
// and notes. r must yield the content uncompressed.
func (c *Capture) Read(kind Kind, name string, r io.Reader) error {
	if prev, dup := c.files[kind]; dup {
		return fmt.Errorf("%s and %s are both %s in one capture: put captures in separate directories", prev, name, kind)
	}
	if isGoroutineKind(kind) {
		for k, prev := range c.files {
			if isGoroutineKind(k) {
				// Several forms of one dump (the fixture layout keeps all
				// three): debug=2 wins, as it alone carries ids and waits.
				if rank(kind) <= rank(k) {
					c.notes = append(c.notes, fmt.Sprintf("%s (%s) not used: %s (%s) is read instead", name, kind, prev, k))
					return nil
				}
				c.notes = append(c.notes, fmt.Sprintf("%s (%s) not used: %s (%s) is read instead", prev, k, name, kind))
				delete(c.files, k)
			}
		}
	}
	c.files[kind] = name
	wrap := func(err error) error {
		var se *stacks.SyntaxError
		var ae *apf.SyntaxError
		switch {
		case errors.As(err, &se):
			return fmt.Errorf("%s:%d: %s", name, se.Line, se.Msg)
		case errors.As(err, &ae):
			return fmt.Errorf("%s:%d: %s", name, ae.Line, ae.Msg)
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	switch kind {
	case KindGoroutineDebug2:
		d, apiserver, err := readDebug2(r)
		if err != nil {
			return wrap(err)
		}
		c.Dump, c.foreign = d, !apiserver
	case KindGoroutineDebug1:
		a, err := stacks.ParseDebug1(r)
		if err != nil {
			return wrap(err)
		}
		c.Dump, c.foreign = watches.FromAggregated(a, watches.FormatDebug1), !aggregatedAPIServer(a)
	case KindGoroutineProfile:
		a, err := stacks.ParseProfile(r)
		if err != nil {
			delete(c.files, kind)
			return fmt.Errorf("%s: %w: binary data that is not a goroutine profile (%v)", name, ErrUnknownKind, err)
		}
		c.Dump, c.foreign = watches.FromAggregated(a, watches.FormatProtobuf), !aggregatedAPIServer(a)
	case KindAPFRequests:
		rq, err := apf.ParseRequests(r)
		if err != nil {
			return wrap(err)
		}
		c.Requests = rq
	case KindAPFLevels:
		lv, skipped, err := apf.ParsePriorityLevels(r)
		if err != nil {
			return wrap(err)
		}
		c.Levels = lv
		if len(skipped) > 0 {
			c.warnings = append(c.warnings, fmt.Sprintf("%s: %d rows skipped (first at line %d: %s)", name, len(skipped), skipped[0].Line, skipped[0].Reason))
		}
	case KindMetrics:
		s, err := metrics.Parse(r, name)
		if err != nil {
			return err
		}
		c.Metrics, c.MetricsSample = metrics.Extract(s), s
	case KindVersion:
		v, err := readVersion(r)
		if err != nil {
			return wrap(err)
		}
		c.Version = v
	case KindCapturedAt:
		t, err := readCapturedAt(r)
		if err != nil {
			return wrap(err)
		}
		if c.CapturedAtSource == "" || c.CapturedAtSource == "captured-at" {
			c.CapturedAt, c.CapturedAtSource = t, "captured-at"
		}
	default:
		delete(c.files, kind)
		return fmt.Errorf("%s: cannot read inputs of kind %q", name, kind)
	}
	return nil
}

func isGoroutineKind(k Kind) bool {
	return k == KindGoroutineDebug2 || k == KindGoroutineDebug1 || k == KindGoroutineProfile
}

func rank(k Kind) int {
	switch k {
	case KindGoroutineDebug2:
		return 3
	case KindGoroutineProfile:
		return 2
	case KindGoroutineDebug1:
		return 1
	}
	return 0
}

// ReadDebug2 streams a debug=2 dump through the watch classifier, keeping
// only what the diagnosis needs.
func ReadDebug2(r io.Reader) (*watches.Dump, error) {
	d, _, err := readDebug2(r)
	return d, err
}

// readDebug2 is ReadDebug2 that also tells whether any goroutine ran
// kube-apiserver code, and refuses dumps concatenated into one input.
func readDebug2(r io.Reader) (*watches.Dump, bool, error) {
	sc := stacks.NewScanner(r)
	sc.SkipArgs, sc.KeepArgs = true, watches.KeepArgs
	c := watches.NewCollector()
	// The ids of a dump's first goroutines (the dumping one, goroutine 1,
	// the runtime's): a dump lists each id once, so seeing one again means
	// another dump starts. A few ids suffice and cost nothing at 1M
	// goroutines; the long-lived ones recur in any later dump of a process.
	const watched = 64
	first := make(map[int64]int, watched)
	apiserver := false
	for sc.Next() {
		g := sc.Goroutine()
		if line, ok := first[g.ID]; ok {
			return nil, false, &stacks.SyntaxError{Line: g.Line, Msg: fmt.Sprintf("a second goroutine dump starts here (goroutine %d was already listed at line %d): the input holds concatenated dumps; split it into one file per capture (one directory each)", g.ID, line)}
		}
		if len(first) < watched {
			first[g.ID] = g.Line
		}
		if !apiserver {
			apiserver = hasAPIServerFrame(g.Frames)
		}
		c.Add(g)
	}
	if err := sc.Err(); err != nil {
		return nil, false, err
	}
	return c.Dump(sc.Stats()), apiserver, nil
}

// hasAPIServerFrame reports whether frames run k8s.io/apiserver code,
// which every kube-apiserver goroutine dump holds (its handlers, the
// watch cache, APF).
func hasAPIServerFrame(frames []stacks.Frame) bool {
	for _, f := range frames {
		if strings.HasPrefix(f.Func, "k8s.io/apiserver/") {
			return true
		}
	}
	return false
}

func readVersion(r io.Reader) (string, error) {
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(&v); err != nil {
		return "", fmt.Errorf("decoding /version: %w", err)
	}
	if v.GitVersion == "" {
		return "", errors.New("/version: field gitVersion is empty")
	}
	return v.GitVersion, nil
}

func readCapturedAt(r io.Reader) (time.Time, error) {
	b, err := io.ReadAll(io.LimitReader(bufio.NewReader(r), 256))
	if err != nil {
		return time.Time{}, err
	}
	s := strings.TrimSpace(string(b))
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, &stacks.SyntaxError{Line: 1, Msg: fmt.Sprintf("capture time %q is not RFC 3339 (like 2026-11-29T10:24:32Z)", s)}
	}
	return t, nil
}

func applyManifest(l *Loaded, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading %q: %w", path, unwrapPathErr(err))
	}
	defer f.Close()
	m, err := ReadManifest(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	root := filepath.Dir(path)
	byDir := map[string]*Capture{}
	for _, c := range l.Captures {
		byDir[filepath.Clean(c.Name)] = c
	}
	for _, inst := range m.Instances {
		if inst.Error != "" {
			l.Warnings = append(l.Warnings, fmt.Sprintf("%s: instance %s was not read: %s", path, inst.Name, inst.Error))
		}
		for _, s := range inst.Samples {
			dir := filepath.Join(root, filepath.FromSlash(s.Dir))
			c, ok := byDir[filepath.Clean(dir)]
			if !ok {
				l.Warnings = append(l.Warnings, fmt.Sprintf("%s: sample directory %s of %s holds no readable capture", path, s.Dir, inst.Name))
				continue
			}
			c.Instance, c.manifest = inst.Name, path
			if c.Version == "" {
				c.Version = inst.Version
			}
			c.CapturedAt, c.CapturedAtSource = s.CapturedAt, "manifest"
			c.Mixed = s.Mixed
			c.Withheld = s.Withheld
			for _, fi := range s.Fetches {
				if fi.Kind == KindMetrics && fi.Error == "" {
					c.MetricsAt = fi.StartedAt
					if fi.ServerDate != nil {
						c.MetricsAt = *fi.ServerDate
					}
				}
				if fi.Kind == KindGoroutineDebug2 && fi.Error == "" {
					c.CapturedAt = fi.StartedAt
					if fi.ServerDate != nil {
						c.CapturedAt, c.CapturedAtSource = *fi.ServerDate, "manifest (server Date header)"
					}
				}
				if fi.Error != "" {
					l.Warnings = append(l.Warnings, fmt.Sprintf("%s: %s %s: %s", inst.Name, s.Dir, fi.Path, fi.Error))
				}
			}
		}
	}
	for _, n := range m.Notes {
		l.Warnings = append(l.Warnings, n)
	}
	return nil
}

// Group is the captures of one API server instance, oldest first.
type Group struct {
	Name     string
	Captures []*Capture
	// SameProcess is set when captures were grouped by equal
	// process_start_time_seconds rather than by a collect manifest.
	SameProcess bool
}

// Groups sorts the captures into API server instances: captures of one
// collect instance, or captures whose /metrics show the same
// process_start_time_seconds (the same process), are samples of one
// server; any other capture is a server of its own.
func (l *Loaded) Groups() []Group {
	var groups []*Group
	byKey := map[string]*Group{}
	for i, c := range l.Captures {
		key := fmt.Sprintf("capture:%d", i)
		same := false
		switch {
		case c.Instance != "":
			key = "instance:" + c.manifest + "\x00" + c.Instance
		case c.Metrics != nil && !math.IsNaN(c.Metrics.ProcessStartTime) && c.Metrics.ProcessStartTime > 0:
			key = fmt.Sprintf("process:%f", c.Metrics.ProcessStartTime)
			same = true
		}
		g, ok := byKey[key]
		if !ok {
			g = &Group{SameProcess: same}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.Captures = append(g.Captures, c)
	}
	out := make([]Group, 0, len(groups))
	for _, g := range groups {
		sortSamples(g.Captures)
		name := serverName(g.Captures)
		parts := splitByProcess(g.Captures)
		for _, caps := range parts {
			sub := Group{Name: name, Captures: caps, SameProcess: g.SameProcess}
			if len(parts) > 1 {
				// The instance restarted between samples: goroutine ids of
				// two processes must not be compared.
				sub.Name = fmt.Sprintf("%s (process started %s)", name, processStart(caps))
			}
			out = append(out, sub)
		}
	}
	return out
}

// sortSamples orders the captures of one process by capture time, or,
// when a capture has none, by the highest goroutine id of its dump: the
// runtime hands out ids in increasing order, so a later dump holds higher
// ones.
func sortSamples(caps []*Capture) {
	timed := true
	for _, c := range caps {
		if c.CapturedAt.IsZero() {
			timed = false
		}
	}
	maxID := func(c *Capture) int64 {
		if c.Dump == nil {
			return 0
		}
		return c.Dump.MaxGoroutineID
	}
	sort.SliceStable(caps, func(i, j int) bool {
		if timed {
			return caps[i].CapturedAt.Before(caps[j].CapturedAt)
		}
		return maxID(caps[i]) < maxID(caps[j])
	})
}

// splitByProcess cuts time-ordered captures of one instance where the
// process start time changes; a capture without metrics stays with the one
// before it.
func splitByProcess(caps []*Capture) [][]*Capture {
	var parts [][]*Capture
	last := math.NaN()
	for _, c := range caps {
		pst := math.NaN()
		if c.Metrics != nil {
			pst = c.Metrics.ProcessStartTime
		}
		if len(parts) == 0 || (!math.IsNaN(pst) && !math.IsNaN(last) && pst != last) {
			parts = append(parts, nil)
		}
		parts[len(parts)-1] = append(parts[len(parts)-1], c)
		if !math.IsNaN(pst) {
			last = pst
		}
	}
	return parts
}

func processStart(caps []*Capture) string {
	for _, c := range caps {
		if c.Metrics != nil && !math.IsNaN(c.Metrics.ProcessStartTime) {
			return time.Unix(int64(c.Metrics.ProcessStartTime), 0).UTC().Format(time.RFC3339)
		}
	}
	return "unknown"
}

// Servers turns the groups into the diagnosis' input.
func (l *Loaded) Servers() []watches.Server {
	var out []watches.Server
	for _, g := range l.Groups() {
		s := watches.Server{Name: g.Name}
		for _, c := range g.Captures {
			if c.Version != "" {
				s.Version = c.Version
			}
			s.Notes = append(s.Notes, c.notes...)
			s.Samples = append(s.Samples, c.sample())
		}
		if len(g.Captures) > 1 {
			if g.SameProcess {
				s.Notes = append(s.Notes, fmt.Sprintf("%d captures of the same process (same process_start_time_seconds) read as samples: %s", len(g.Captures), captureNames(g.Captures)))
			}
			for _, c := range g.Captures {
				if c.CapturedAt.IsZero() {
					s.Notes = append(s.Notes, fmt.Sprintf("%s has no capture time: samples are ordered by goroutine ids, and only a wait that went down counts as progress", c.Name))
				}
			}
		}
		out = append(out, s)
	}
	return out
}

func serverName(cs []*Capture) string {
	if cs[0].Instance != "" {
		return cs[0].Instance
	}
	if len(cs) == 1 {
		return cs[0].Name
	}
	parent := filepath.Dir(cs[0].Name)
	for _, c := range cs[1:] {
		if filepath.Dir(c.Name) != parent {
			return captureNames(cs)
		}
	}
	return parent
}

func (c *Capture) sample() watches.Sample {
	s := watches.Sample{Source: c.Name, CapturedAt: c.CapturedAt, MetricsAt: c.MetricsAt, Dump: c.Dump, Requests: c.Requests, Levels: c.Levels, Mixed: c.Mixed, Withheld: c.Withheld}
	if m := c.Metrics; m != nil {
		mc := &watches.MetricsContext{Levels: map[string]watches.LevelSeats{}}
		num := func(v float64) *float64 {
			if math.IsNaN(v) {
				return nil
			}
			return &v
		}
		mc.Goroutines, mc.ResidentMemoryBytes, mc.ProcessStartTime = num(m.Goroutines), num(m.ResidentMemoryBytes), num(m.ProcessStartTime)
		for _, pl := range m.PriorityLevels {
			mc.Levels[pl.Name] = watches.LevelSeats{Executing: num(pl.ExecutingSeats), Limit: num(pl.LimitSeats)}
		}
		for _, r := range m.Resources {
			if !math.IsNaN(r.Watchers) && r.Watchers > 0 {
				mc.WatchersByResource = append(mc.WatchersByResource, watches.ResourceCount{Group: r.Group, Resource: r.Name(), Count: r.Watchers})
			}
		}
		if c.MetricsSample != nil {
			mc.WatchRequests = metrics.WatchRequests(c.MetricsSample)
			mc.EventSizes = metrics.EventSizeBuckets(c.MetricsSample)
		}
		s.Metrics = mc
	}
	return s
}

// RequestSlack is how long after a capture time an APF request may have
// started and still be read with that capture.
const RequestSlack = 5 * time.Second

// Foreign names the captures whose goroutine dump holds no kube-apiserver
// code (Capture.Foreign).
func (l *Loaded) Foreign() []string {
	var out []string
	for _, c := range l.Captures {
		if c.Foreign() {
			out = append(out, c.Name)
		}
	}
	return out
}

// ForeignWarning is the warning for a capture whose dump is Foreign.
func ForeignWarning(name string) string {
	return fmt.Sprintf("%s: the goroutine dump holds no kube-apiserver code (no k8s.io/apiserver frame), so no watch-cache goroutines were found: it may be from another process; capture kube-apiserver's /debug/pprof/goroutine?debug=2", name)
}

// dropLaterRequests removes the APF requests that started after the
// capture time (beyond RequestSlack): a request that did not exist when the
// goroutine dump was taken cannot be one of its watches (an APF dump of
// another moment, t1's dump with t2's APF file). It returns a warning, or
// "" when nothing was dropped.
func (c *Capture) dropLaterRequests() string {
	if c.Requests == nil || c.CapturedAt.IsZero() {
		return ""
	}
	limit := c.CapturedAt.Add(RequestSlack)
	kept := c.Requests.Requests[:0:0]
	var latest time.Time
	dropped := 0
	for _, r := range c.Requests.Requests {
		if r.StartTime.After(limit) {
			dropped++
			if r.StartTime.After(latest) {
				latest = r.StartTime
			}
			continue
		}
		kept = append(kept, r)
	}
	if dropped == 0 {
		return ""
	}
	c.Requests.Requests = kept
	return fmt.Sprintf("%s: %d APF request(s) started after the capture time %s (up to %s after it; %s): they are not of the same moment as the goroutine dump and are not matched; give each capture its own APF dump",
		c.files[KindAPFRequests], dropped, c.CapturedAt.Format(time.RFC3339), latest.Sub(c.CapturedAt).Round(time.Second), c.CapturedAtSource)
}

// kubernetesEpoch is the day of Kubernetes' first commit: no kube-apiserver
// was captured before it.
var kubernetesEpoch = time.Date(2014, 6, 6, 0, 0, 0, 0, time.UTC)

// checkCaptureTime refuses a capture time no kube-apiserver capture can
// have: before Kubernetes existed, or after now (a clock an hour fast is
// allowed).
func (c *Capture) checkCaptureTime(now time.Time) error {
	if c.CapturedAt.IsZero() {
		return nil
	}
	where := c.CapturedAtSource
	if f, ok := c.files[KindCapturedAt]; ok && c.CapturedAtSource == "captured-at" {
		where = f + ":1"
	}
	ts := c.CapturedAt.Format(time.RFC3339Nano)
	if c.CapturedAt.Before(kubernetesEpoch) {
		return fmt.Errorf("%s: capture time %s is before Kubernetes existed (%s): fix the capture time", where, ts, kubernetesEpoch.Format("2006-01-02"))
	}
	if !now.IsZero() && c.CapturedAt.After(now.Add(time.Hour)) {
		return fmt.Errorf("%s: capture time %s is in the future (now %s): fix the capture time", where, ts, now.UTC().Format(time.RFC3339))
	}
	return nil
}

// orderWarnings says where capture times and goroutine ids disagree on the
// order of a process' samples: ids only grow, so one capture time is wrong.
func (l *Loaded) orderWarnings() []string {
	var out []string
	for _, g := range l.Groups() {
		for i := 1; i < len(g.Captures); i++ {
			a, b := g.Captures[i-1], g.Captures[i]
			if a.CapturedAt.IsZero() || b.CapturedAt.IsZero() || a.Dump == nil || b.Dump == nil || a.Dump.MaxGoroutineID == 0 || b.Dump.MaxGoroutineID == 0 {
				continue
			}
			if a.Dump.MaxGoroutineID > b.Dump.MaxGoroutineID {
				out = append(out, fmt.Sprintf("%s: capture times put %s (%s) before %s (%s), but its goroutine ids are higher (up to %d, against %d), and ids only grow: one capture time is wrong; samples are read in capture-time order",
					g.Name, a.Name, a.CapturedAt.Format(time.RFC3339), b.Name, b.CapturedAt.Format(time.RFC3339), a.Dump.MaxGoroutineID, b.Dump.MaxGoroutineID))
			}
		}
	}
	return out
}
