package main

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
)

// block is one line of a coverage profile: a run of statements in file
// between two positions, and how often the tests ran it.
type block struct {
	startLine, startCol int
	endLine, endCol     int
	stmts               int
	count               int
}

// profile is a parsed coverage profile: each file (its path in the module,
// slash-separated, e.g. internal/cli/diagnose.go) to its blocks. A block that
// several packages' runs list is merged: it counts as run if any run ran it.
type profile map[string]map[[4]int]*block

// parseProfile reads what `go test -coverprofile` writes ("mode: atomic"
// then "import/path/file.go:L.C,L.C stmts count" lines), keeping the files
// of module (whose import path prefix it strips) and dropping the others.
func parseProfile(r io.Reader, module string) (profile, error) {
	out := profile{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "mode:") {
			continue
		}
		file, b, err := parseBlock(text)
		if err != nil {
			return nil, fmt.Errorf("profile line %d: %w", line, err)
		}
		rel, ok := strings.CutPrefix(file, module+"/")
		if !ok {
			continue
		}
		if out[rel] == nil {
			out[rel] = map[[4]int]*block{}
		}
		key := [4]int{b.startLine, b.startCol, b.endLine, b.endCol}
		if old := out[rel][key]; old != nil {
			old.count += b.count
			continue
		}
		out[rel][key] = &b
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if line == 0 {
		return nil, fmt.Errorf("empty profile")
	}
	return out, nil
}

// parseBlock splits "file:L.C,L.C stmts count".
func parseBlock(text string) (string, block, error) {
	var b block
	colon := strings.LastIndex(text, ":")
	if colon < 0 {
		return "", b, fmt.Errorf("no file in %q", text)
	}
	file, rest := text[:colon], text[colon+1:]
	fields := strings.Fields(rest)
	if len(fields) != 3 {
		return "", b, fmt.Errorf("want \"file:L.C,L.C stmts count\", got %q", text)
	}
	from, to, ok := strings.Cut(fields[0], ",")
	if !ok {
		return "", b, fmt.Errorf("no range in %q", text)
	}
	var err error
	for _, p := range []struct {
		s   string
		dst []*int
	}{
		{from, []*int{&b.startLine, &b.startCol}},
		{to, []*int{&b.endLine, &b.endCol}},
	} {
		l, c, _ := strings.Cut(p.s, ".")
		if *p.dst[0], err = strconv.Atoi(l); err != nil {
			return "", b, fmt.Errorf("bad position in %q", text)
		}
		if *p.dst[1], err = strconv.Atoi(c); err != nil {
			return "", b, fmt.Errorf("bad position in %q", text)
		}
	}
	if b.stmts, err = strconv.Atoi(fields[1]); err != nil {
		return "", b, fmt.Errorf("bad statement count in %q", text)
	}
	if b.count, err = strconv.Atoi(fields[2]); err != nil {
		return "", b, fmt.Errorf("bad run count in %q", text)
	}
	return file, b, nil
}

// packages sums, per package directory (internal/cli), the statements the
// profile lists and those the tests ran.
func (p profile) packages() map[string][2]int {
	out := map[string][2]int{}
	for file, blocks := range p {
		dir := path.Dir(file)
		sum := out[dir]
		for _, b := range blocks {
			sum[1] += b.stmts
			if b.count > 0 {
				sum[0] += b.stmts
			}
		}
		out[dir] = sum
	}
	return out
}

// covered counts the statements of file between two lines (inclusive) and
// those the tests ran.
func (p profile) covered(file string, from, to int) (run, total int) {
	for _, b := range p[file] {
		if b.startLine < from || b.endLine > to {
			continue
		}
		total += b.stmts
		if b.count > 0 {
			run += b.stmts
		}
	}
	return run, total
}
