package stacks

import (
	"bytes"
	"strconv"
	"strings"
)

// parseHeader reads "goroutine 33855 [select, 2 minutes]:" and the
// variants of runtime/traceback.go goroutineheader: " gp=... m=... mp=..."
// at GOTRACEBACK=system, state suffixes " (scan)", " (durable)",
// " (leaked)", and the items ", N minutes", ", locked to thread",
// ", synctest bubble N" and " labels:{...}".
func (s *Scanner) parseHeader(line []byte) bool {
	g := &s.g
	rest := line[len(goroutinePrefix):]
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	id, ok := parseUint(rest[:n])
	if !ok {
		return false
	}
	g.ID = id
	rest = rest[n:]
	open := bytes.IndexByte(rest, '[')
	if open < 0 || !bytes.HasSuffix(rest, []byte("]:")) {
		return false
	}
	inner := rest[open+1 : len(rest)-2]
	// Labels come last and may hold any quoted text, commas included.
	// (A brace is rare, and cheaper to look for first.)
	if i := labelsAt(inner); i >= 0 {
		labels, ok := parseLabels(inner[i+len(" labels:{"):], ": ")
		if !ok {
			return false
		}
		g.Labels = labels
		inner = inner[:i]
	}
	first := true
	for len(inner) > 0 {
		var item []byte
		if i := bytes.Index(inner, []byte(", ")); i >= 0 {
			item, inner = inner[:i], inner[i+2:]
		} else {
			item, inner = inner, nil
		}
		if first {
			first = false
			state := item
			// Most states end in no ')': the search is skipped for them.
			for len(state) > 0 && state[len(state)-1] == ')' {
				open := bytes.LastIndex(state, []byte(" ("))
				if open < 0 {
					break
				}
				suffix := state[open+2 : len(state)-1]
				// Only the runtime's decorations are split off; "(idle)",
				// "(nil chan)" and the like belong to the wait reason.
				if !isHeaderDecoration(suffix) {
					break
				}
				// Peeled from the end: insert in front to keep the printed order.
				g.Flags = append(g.Flags, "")
				copy(g.Flags[1:], g.Flags)
				g.Flags[0] = s.intern(suffix)
				state = state[:open]
			}
			g.State = s.intern(state)
			continue
		}
		switch {
		case bytes.HasSuffix(item, []byte(" minutes")):
			m, ok := parseUint(item[:len(item)-len(" minutes")])
			if !ok || m > 1<<31 {
				return false
			}
			g.WaitMinutes = int(m)
		case bytes.Equal(item, []byte("locked to thread")):
			g.LockedToThread = true
		default:
			g.Flags = append(g.Flags, s.intern(item))
		}
	}
	return g.State != ""
}

// labelsAt is bytes.Index(inner, []byte(" labels:{")), skipped when
// inner holds no brace.
func labelsAt(inner []byte) int {
	if bytes.IndexByte(inner, '{') < 0 {
		return -1
	}
	return bytes.Index(inner, []byte(" labels:{"))
}

func isHeaderDecoration(b []byte) bool {
	switch string(b) {
	case "scan", "durable", "leaked":
		return true
	}
	return false
}

// parseLabels reads goroutine labels after their opening brace, up to
// and including the closing one, which must end b: `"k": "v", "k2": "v2"}`
// as a debug=2 dump prints them with GODEBUG=tracebacklabels=1 (sep ": "),
// `"k":"v", "k2":"v2"}` as a debug=1 profile does (runtime/pprof
// labelMap.String, sep ":"). Keys and values use Go quoting.
func parseLabels(b []byte, sep string) (map[string]string, bool) {
	labels := map[string]string{}
	s := string(b)
	for {
		if len(s) > 0 && s[0] == '}' {
			return labels, len(s) == 1
		}
		kq, err := strconv.QuotedPrefix(s)
		if err != nil {
			return nil, false
		}
		s = s[len(kq):]
		if !strings.HasPrefix(s, sep) {
			return nil, false
		}
		s = s[len(sep):]
		vq, err := strconv.QuotedPrefix(s)
		if err != nil {
			return nil, false
		}
		s = s[len(vq):]
		k, _ := strconv.Unquote(kq)
		v, _ := strconv.Unquote(vq)
		labels[k] = v
		switch {
		case strings.HasPrefix(s, ", "):
			s = s[2:]
		case !strings.HasPrefix(s, "}"):
			return nil, false
		}
	}
}
