package dumpgen

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

type template struct {
	name   string
	blocks []block
}

// block is one goroutine of a template. Its text is parts[0] id[0]
// parts[1] id[1] ... parts[n], where ids[0] is the goroutine's own id and
// the others are the ids it names (its parent, ancestors).
type block struct {
	parts [][]byte
	ids   []int64
	size  int
}

// trio is the stuck watch the planted ones copy, in the order the real
// dump prints its goroutines.
type trio struct {
	conn, handler, apf, watcher []byte // whole blocks, header and body
	connParent                  int64
}

// Function names the generator recognises. Plain substrings: templates are
// real kube-apiserver dumps, so vendored prefixes need no care here.
var (
	headerPrefix     = []byte("goroutine ")
	createdBy        = []byte("created by ")
	inGoroutine      = []byte(" in goroutine ")
	originating      = []byte("[originating from goroutine ")
	fnSendEvent      = []byte("k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).sendWatchCacheEvent(")
	fnProcessIntvl   = []byte("k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInterval(")
	byCacherWatch    = []byte("created by k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch in goroutine ")
	byAPFHandle      = []byte("created by k8s.io/apiserver/pkg/server/filters.(*priorityAndFairnessHandler).Handle in goroutine ")
	byScheduler      = []byte("created by golang.org/x/net/http2.(*serverConn).scheduleHandler in goroutine ")
	fnWriteData      = []byte("golang.org/x/net/http2.(*serverConn).writeDataFromHandler(")
	fnInitSignalWait = []byte("k8s.io/apiserver/pkg/util/flowcontrol.(*initializationSignal).Wait(")
)

// Load reads template dumps (debug=2 text) from paths. At least one of
// them must hold a complete stuck or slow initial-events watch (watcher,
// handler, APF goroutine and connection) to copy for planting; the
// seed-repro captures do.
func Load(paths ...string) (*Set, error) {
	if len(paths) == 0 {
		return nil, errors.New("dumpgen: no template dumps given")
	}
	s := &Set{}
	var maxID int64
	var bestTrio *trio
	bestWait := -1
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("dumpgen: %w", err)
		}
		t, tr, wait, hi, err := parseTemplate(p, data)
		if err != nil {
			return nil, err
		}
		if hi > maxID {
			maxID = hi
		}
		if tr != nil && wait > bestWait {
			bestTrio, bestWait = tr, wait
		}
		s.templates = append(s.templates, t)
	}
	if bestTrio == nil {
		return nil, fmt.Errorf("dumpgen: no template holds an initial-events watch (watcher in sendWatchCacheEvent from processInterval with its handler, APF goroutine and connection) to plant")
	}
	s.trio = bestTrio
	s.stride = 10
	for s.stride <= maxID {
		s.stride *= 10
	}
	return s, nil
}

// LoadRepo loads the seed-repro debug=2 dumps from the repository's
// testdata (or, failing that, from ../shared/fixtures next to it), found by
// walking up from the working directory, as `go test` runs in a package's
// directory.
func LoadRepo() (*Set, error) {
	paths, err := RepoTemplatePaths()
	if err != nil {
		return nil, err
	}
	return Load(paths...)
}

// RepoTemplatePaths returns the paths LoadRepo reads.
func RepoTemplatePaths() ([]string, error) {
	const rel = "kube-apiserver-v1.37.2/seed-repro"
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	for {
		for _, base := range []string{filepath.Join(dir, "testdata"), filepath.Join(dir, "..", "shared", "fixtures")} {
			t1 := filepath.Join(base, rel, "t1", "goroutine-debug2.txt")
			t2 := filepath.Join(base, rel, "t2", "goroutine-debug2.txt")
			if fileExists(t1) && fileExists(t2) {
				return []string{t1, t2}, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, fmt.Errorf("dumpgen: testdata/%s/{t1,t2}/goroutine-debug2.txt not found above the working directory", rel)
		}
		dir = parent
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// parseTemplate splits a dump into blocks, leaves out the real clients'
// initial-events watches and returns the stuck one with the longest wait.
func parseTemplate(name string, data []byte) (template, *trio, int, int64, error) {
	t := template{name: name}
	raw := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n\n"))
	type rawBlock struct {
		text   []byte
		id     int64
		parent int64
		wait   int
	}
	var rbs []rawBlock
	byID := map[int64]int{}
	var maxID int64
	for i, b := range raw {
		b = bytes.Trim(b, "\n")
		if len(b) == 0 {
			continue
		}
		if !bytes.HasPrefix(b, headerPrefix) {
			return t, nil, 0, 0, fmt.Errorf("dumpgen: %s: block %d does not start with %q", name, i, headerPrefix)
		}
		id, _, ok := leadingInt(b[len(headerPrefix):])
		if !ok {
			return t, nil, 0, 0, fmt.Errorf("dumpgen: %s: block %d: bad goroutine id", name, i)
		}
		rb := rawBlock{text: b, id: id, parent: parentID(b), wait: headerWait(b)}
		byID[id] = len(rbs)
		rbs = append(rbs, rb)
		if id > maxID {
			maxID = id
		}
		if rb.parent > maxID {
			maxID = rb.parent
		}
	}
	// The real clients' watches: initial-phase watchers blocked sending,
	// with their handlers and APF goroutines.
	drop := map[int64]bool{}
	var best *trio
	bestWait := -1
	handlers := map[int64]bool{}
	for _, rb := range rbs {
		if isInitialWatcher(rb.text) {
			drop[rb.id] = true
			drop[rb.parent] = true
			handlers[rb.parent] = true
		}
	}
	apfOf := map[int64]int64{}
	for _, rb := range rbs {
		if bytes.Contains(rb.text, byAPFHandle) && handlers[rb.parent] {
			drop[rb.id] = true
			apfOf[rb.parent] = rb.id
		}
	}
	for _, rb := range rbs {
		if !isInitialWatcher(rb.text) || rb.wait <= bestWait {
			continue
		}
		hi, ok1 := byID[rb.parent]
		ai, ok2 := byID[apfOf[rb.parent]]
		if !ok1 || !ok2 {
			continue
		}
		h := rbs[hi]
		if !bytes.Contains(h.text, byScheduler) || !bytes.Contains(h.text, fnWriteData) || !bytes.Contains(rbs[ai].text, fnInitSignalWait) {
			continue
		}
		ci, ok := byID[h.parent]
		if !ok {
			continue
		}
		best = &trio{conn: rbs[ci].text, handler: h.text, apf: rbs[ai].text, watcher: rb.text, connParent: rbs[ci].parent}
		bestWait = rb.wait
	}
	for _, rb := range rbs {
		if drop[rb.id] {
			continue
		}
		t.blocks = append(t.blocks, splitBlock(rb.text))
	}
	if len(t.blocks) == 0 {
		return t, nil, 0, 0, fmt.Errorf("dumpgen: %s: no goroutines", name)
	}
	return t, best, bestWait, maxID, nil
}

// isInitialWatcher: a cacheWatcher goroutine replaying initial events and
// parked sending one.
func isInitialWatcher(b []byte) bool {
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return false
	}
	body := b[nl+1:]
	return bytes.HasPrefix(body, fnSendEvent) && bytes.Contains(body, fnProcessIntvl) && bytes.Contains(body, byCacherWatch)
}

// parentID returns N of "created by ... in goroutine N", 0 if absent.
func parentID(b []byte) int64 {
	i := bytes.LastIndex(b, createdBy)
	if i < 0 {
		return 0
	}
	line := b[i:]
	if nl := bytes.IndexByte(line, '\n'); nl >= 0 {
		line = line[:nl]
	}
	j := bytes.LastIndex(line, inGoroutine)
	if j < 0 {
		return 0
	}
	id, _, _ := leadingInt(line[j+len(inGoroutine):])
	return id
}

// headerWait returns N of "[..., N minutes]", 0 if absent.
func headerWait(b []byte) int {
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		nl = len(b)
	}
	h := b[:nl]
	i := bytes.Index(h, []byte(" minutes"))
	if i < 0 {
		return 0
	}
	j := bytes.LastIndex(h[:i], []byte(", "))
	if j < 0 {
		return 0
	}
	n, _, _ := leadingInt(h[j+2 : i])
	return int(n)
}

func leadingInt(b []byte) (int64, int, bool) {
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	if n == 0 || n > 18 {
		return 0, n, false
	}
	v, err := strconv.ParseInt(string(b[:n]), 10, 64)
	return v, n, err == nil
}

// splitBlock cuts a block at the ids it holds: its own (in the header) and
// those of "created by ... in goroutine N" and "[originating from goroutine
// N]" lines.
func splitBlock(b []byte) block {
	var bl block
	bl.size = len(b) + 2
	rest := b
	// Header id.
	id, n, _ := leadingInt(rest[len(headerPrefix):])
	bl.parts = append(bl.parts, rest[:len(headerPrefix)])
	bl.ids = append(bl.ids, id)
	rest = rest[len(headerPrefix)+n:]
	start := 0
	for pos := 0; pos < len(rest); {
		nl := bytes.IndexByte(rest[pos:], '\n')
		end := len(rest)
		if nl >= 0 {
			end = pos + nl
		}
		line := rest[pos:end]
		at := -1
		switch {
		case bytes.HasPrefix(line, createdBy):
			if j := bytes.LastIndex(line, inGoroutine); j >= 0 {
				at = pos + j + len(inGoroutine)
			}
		case bytes.HasPrefix(line, originating):
			at = pos + len(originating)
		}
		if at >= 0 {
			if v, k, ok := leadingInt(rest[at:end]); ok {
				bl.parts = append(bl.parts, rest[start:at])
				bl.ids = append(bl.ids, v)
				start = at + k
			}
		}
		pos = end + 1
	}
	bl.parts = append(bl.parts, rest[start:])
	return bl
}
