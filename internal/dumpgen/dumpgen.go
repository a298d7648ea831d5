// Package dumpgen writes large debug=2 goroutine dumps for tests and
// benchmarks by multiplying real ones.
//
// A Set holds real dumps (templates) split into goroutine blocks. Write
// emits copies of those blocks with fresh goroutine ids, renumbering every
// "created by ... in goroutine N" line the same way, so parent links stay
// consistent inside each copy and the mix of stacks stays that of a real
// kube-apiserver. Into that background it plants stuck watches at known
// ids: the linked goroutines of one watch request stuck replaying its
// initial events, copied from the stuck watch of the real dump:
//
//   - the connection goroutine C (http2 serverConn.serve);
//   - the handler H, blocked in writeDataFromHandler under
//     (*WatchServer).HandleHTTP, created by scheduleHandler in goroutine C;
//   - the APF goroutine in (*initializationSignal).Wait, created by
//     (*priorityAndFairnessHandler).Handle in goroutine H;
//   - the watcher in sendWatchCacheEvent from processInterval, created by
//     (*Cacher).Watch in goroutine H, parked for Config.WaitMinutes.
//
// The watches of the real dump's own clients (initial-phase watchers
// blocked sending, their handlers and APF goroutines) are left out of the
// background, so the planted ones are the only stuck watches in the output.
//
// Output is written as it is made: a dump of any size costs the memory of
// the templates (a few MB) and nothing more.
package dumpgen

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// Config says what to generate.
type Config struct {
	// Goroutines is the number of goroutines in the dump, planted ones
	// included.
	Goroutines int
	// Stuck is the number of stuck watches to plant. Each adds four
	// goroutines (connection, handler, APF, watcher).
	Stuck int
	// WaitMinutes is the planted goroutines' wait, printed as
	// "[select, N minutes]"; 0 means 5. Values under 1 are refused.
	WaitMinutes int
	// TrimHandlers cuts each planted handler's stack after its
	// (*WatchServer).HandleHTTP frame (keeping the "created by" line):
	// about 2 KB a watch instead of 20, for benchmarks of what follows
	// parsing (client matching) on many watches.
	TrimHandlers bool `json:",omitempty"`
	// OneConnection serves every planted handler over the first planted
	// watch's connection goroutine (the others' connection goroutines
	// stay, serving nothing): the shape of a hostile or synthetic dump,
	// since a real server caps the streams of one connection.
	OneConnection bool `json:",omitempty"`
}

// Planted names the goroutines of one planted stuck watch.
type Planted struct {
	WatcherID   int64 `json:"watcherID"`
	HandlerID   int64 `json:"handlerID"`
	APFID       int64 `json:"apfID"`
	ConnID      int64 `json:"connID"`
	WaitMinutes int   `json:"waitMinutes"`
}

// Result describes a written dump.
type Result struct {
	Goroutines int       `json:"goroutines"`
	Bytes      int64     `json:"bytes"`
	Planted    []Planted `json:"planted"`
}

// Set is a set of template dumps. It is read-only after Load and safe for
// concurrent use.
type Set struct {
	templates []template
	// stride separates the ids of two copies: a power of ten above every
	// id of every template.
	stride int64
	// trio is the stuck watch copied for planting.
	trio *trio
}

// Write writes a dump made to cfg to w and says which stuck watches it
// planted. The ids of copy k of a template are the template's plus
// k*stride; planted watches take ids above every copy.
func (s *Set) Write(w io.Writer, cfg Config) (Result, error) {
	if cfg.WaitMinutes == 0 {
		cfg.WaitMinutes = 5
	}
	if cfg.WaitMinutes < 1 {
		return Result{}, fmt.Errorf("dumpgen: WaitMinutes %d: a stuck watch waits at least 1 minute", cfg.WaitMinutes)
	}
	if cfg.Stuck < 0 || cfg.Goroutines < 4*cfg.Stuck || cfg.Goroutines < 1 {
		return Result{}, fmt.Errorf("dumpgen: %d goroutines cannot hold %d stuck watches of 4 goroutines", cfg.Goroutines, cfg.Stuck)
	}
	cw := &countingWriter{w: w}
	bw := bufio.NewWriterSize(cw, 256<<10)
	background := cfg.Goroutines - 4*cfg.Stuck
	// Copies needed, to place planted ids above them all.
	copies := 0
	for n, k := 0, 0; n < background; k++ {
		n += len(s.templates[k%len(s.templates)].blocks)
		copies++
	}
	res := Result{Goroutines: cfg.Goroutines}
	base := int64(copies+1) * s.stride
	for i := 0; i < cfg.Stuck; i++ {
		b := base + int64(i)*10
		res.Planted = append(res.Planted, Planted{ConnID: b + 1, HandlerID: b + 2, APFID: b + 3, WatcherID: b + 4, WaitMinutes: cfg.WaitMinutes})
	}
	// Planted watch i goes after background goroutine (i+1)*bg/(Stuck+1).
	nextPlant, planted := 0, 0
	plantAt := func(i int) int { return int(int64(i+1) * int64(background) / int64(cfg.Stuck+1)) }
	if cfg.Stuck > 0 {
		nextPlant = plantAt(0)
	}
	var scratch []byte
	written := 0
	for k := 0; written < background || planted < cfg.Stuck; k++ {
		t := &s.templates[k%len(s.templates)]
		off := int64(k) * s.stride
		for bi := 0; bi < len(t.blocks); bi++ {
			for planted < cfg.Stuck && written == nextPlant {
				conn := res.Planted[planted].ConnID
				if cfg.OneConnection {
					conn = res.Planted[0].ConnID
				}
				if err := s.plant(bw, &scratch, res.Planted[planted], conn, cfg.TrimHandlers); err != nil {
					return res, err
				}
				planted++
				if planted < cfg.Stuck {
					nextPlant = plantAt(planted)
				}
			}
			if written == background {
				break
			}
			bl := &t.blocks[bi]
			for j, p := range bl.parts {
				bw.Write(p)
				if j < len(bl.ids) {
					scratch = strconv.AppendInt(scratch[:0], bl.ids[j]+off, 10)
					bw.Write(scratch)
				}
			}
			bw.WriteString("\n\n")
			written++
		}
	}
	if err := bw.Flush(); err != nil {
		return res, err
	}
	res.Bytes = cw.n
	return res, nil
}

// WriteFile writes a dump to path (through a temporary file renamed into
// place, so an interrupted run leaves no partial dump).
func (s *Set) WriteFile(path string, cfg Config) (Result, error) {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return Result{}, err
	}
	res, err := s.Write(f, cfg)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return Result{}, fmt.Errorf("dumpgen: writing %s: %w", path, err)
	}
	return res, nil
}

// Generate returns a whole dump in memory, for tests and benchmarks of a
// few hundred thousand goroutines at most.
func (s *Set) Generate(cfg Config) ([]byte, Result, error) {
	var buf bytes.Buffer
	buf.Grow(cfg.Goroutines*s.meanBlockSize() + cfg.Stuck*16<<10)
	res, err := s.Write(&buf, cfg)
	return buf.Bytes(), res, err
}

func (s *Set) meanBlockSize() int {
	n, size := 0, 0
	for _, t := range s.templates {
		for _, b := range t.blocks {
			size += b.size
			n++
		}
	}
	return size/n + 1
}

// plant writes one stuck watch: connection, handler, APF goroutine and
// watcher, in the order the real dump printed them, with p's ids, the
// handler, APF and watcher waits set to p.WaitMinutes, the handler
// created by connection goroutine conn.
func (s *Set) plant(w *bufio.Writer, scratch *[]byte, p Planted, conn int64, trim bool) error {
	tr := s.trio
	write := func(text []byte, self, parent int64, wait int) {
		bl := splitBlock(text)
		nl := bytes.IndexByte(bl.parts[1], '\n')
		header := bl.parts[1][:nl]
		w.Write(bl.parts[0])
		*scratch = strconv.AppendInt((*scratch)[:0], self, 10)
		w.Write(*scratch)
		if wait > 0 {
			w.Write(withWait(header, wait))
		} else {
			w.Write(header)
		}
		w.Write(bl.parts[1][nl:])
		for j := 2; j < len(bl.parts); j++ {
			if j-1 < len(bl.ids) {
				*scratch = strconv.AppendInt((*scratch)[:0], parent, 10)
				w.Write(*scratch)
			}
			w.Write(bl.parts[j])
		}
		w.WriteString("\n\n")
	}
	write(tr.conn, p.ConnID, tr.connParent, 0)
	handler := tr.handler
	if trim {
		handler = trimHandler(handler)
	}
	write(handler, p.HandlerID, conn, p.WaitMinutes)
	write(tr.apf, p.APFID, p.HandlerID, p.WaitMinutes)
	write(tr.watcher, p.WatcherID, p.HandlerID, p.WaitMinutes)
	return nil
}

// trimHandler keeps a handler block's header, its frames down to
// (*WatchServer).HandleHTTP and its "created by" lines.
func trimHandler(text []byte) []byte {
	lines := bytes.Split(text, []byte("\n"))
	out := [][]byte{lines[0]}
	i := 1
	for ; i+1 < len(lines); i += 2 {
		out = append(out, lines[i], lines[i+1])
		if bytes.Contains(lines[i], []byte("(*WatchServer).HandleHTTP(")) {
			break
		}
	}
	for ; i < len(lines); i++ {
		if bytes.HasPrefix(lines[i], []byte("created by ")) {
			out = append(out, lines[i:]...)
			break
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// withWait rewrites " [state, 2 minutes]:" (or " [state]:") to carry
// wait minutes.
func withWait(header []byte, wait int) []byte {
	open := bytes.IndexByte(header, '[')
	end := bytes.IndexByte(header[open:], ']')
	if open < 0 || end < 0 {
		return header
	}
	inner := header[open+1 : open+end]
	state := inner
	if i := bytes.IndexByte(inner, ','); i >= 0 {
		state = inner[:i]
	}
	out := append([]byte(nil), header[:open+1]...)
	out = append(out, state...)
	out = append(out, ", "...)
	out = strconv.AppendInt(out, int64(wait), 10)
	out = append(out, " minutes"...)
	out = append(out, header[open+end:]...)
	return out
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Version changes whenever Write's output for a given Set and Config
// changes; it is part of the fingerprint EnsureFile checks.
const Version = "dumpgen/1"

// fileMeta is the sidecar EnsureFile writes next to a dump.
type fileMeta struct {
	Fingerprint string `json:"fingerprint"`
	Config      Config `json:"config"`
	Result      Result `json:"result"`
}

// EnsureFile makes path hold a dump made to cfg, reusing the file when its
// sidecar (path + ".json") says it was made by the same generator version
// from the same templates and config and its size matches. It reports
// whether the file was reused.
func (s *Set) EnsureFile(path string, cfg Config) (Result, bool, error) {
	fp := s.fingerprint()
	meta := path + ".json"
	if b, err := os.ReadFile(meta); err == nil {
		var m fileMeta
		if json.Unmarshal(b, &m) == nil && m.Fingerprint == fp && m.Config == cfg {
			if st, err := os.Stat(path); err == nil && st.Size() == m.Result.Bytes {
				return m.Result, true, nil
			}
		}
	}
	os.Remove(meta)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return Result{}, false, err
	}
	res, err := s.WriteFile(path, cfg)
	if err != nil {
		return Result{}, false, err
	}
	b, err := json.MarshalIndent(fileMeta{Fingerprint: fp, Config: cfg, Result: res}, "", "  ")
	if err != nil {
		return Result{}, false, err
	}
	if err := os.WriteFile(meta, append(b, '\n'), 0o644); err != nil {
		return Result{}, false, err
	}
	return res, false, nil
}

// fingerprint identifies the generator version and the templates.
func (s *Set) fingerprint() string {
	h := sha256.New()
	io.WriteString(h, Version)
	for _, t := range s.templates {
		for _, b := range t.blocks {
			for j, p := range b.parts {
				h.Write(p)
				if j < len(b.ids) {
					fmt.Fprintf(h, "<%d>", b.ids[j])
				}
			}
		}
	}
	for _, b := range [][]byte{s.trio.conn, s.trio.handler, s.trio.apf, s.trio.watcher} {
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}
