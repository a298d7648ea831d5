package apf

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Skips are the rows a parse left out: every one counted, the first
// MaxSkippedKept kept with their lines, never all (a hostile dump of a
// million bad rows keeps 20).
type Skips struct {
	Count int
	First []Skipped
}

// add counts a skipped row, keeping the first MaxSkippedKept.
func (s *Skips) add(line int, reason string) {
	s.Count++
	if len(s.First) < MaxSkippedKept {
		s.First = append(s.First, Skipped{Line: line, Reason: reason})
	}
}

// ParsePriorityLevels reads a dump_priority_levels dump. Columns are taken
// by header name; columns this release does not know are ignored and
// missing ones stay zero. Rows that cannot be read are counted in Skips.
func ParsePriorityLevels(r io.Reader) ([]PriorityLevel, Skips, error) {
	rs := newRows(r)
	header, ok, err := rs.next()
	if err != nil {
		return nil, Skips{}, err
	}
	if !ok {
		return nil, Skips{}, errors.New("empty input: no dump_priority_levels header")
	}
	if len(header) < 2 || header[0] != "PriorityLevelName" || header[1] != "ActiveQueues" {
		return nil, Skips{}, &SyntaxError{LineNo: rs.line, Msg: fmt.Sprintf("not an APF dump_priority_levels: header starts %q, want %q", strings.Join(header[:min(2, len(header))], ", "), PriorityLevelsHeader)}
	}
	var levels []PriorityLevel
	var skipped Skips
	for {
		cells, ok, err := rs.next()
		if err != nil {
			return nil, Skips{}, err
		}
		if !ok {
			break
		}
		pl, reason := parseLevelRow(header, cells)
		if reason != "" {
			skipped.add(rs.line, reason)
			continue
		}
		pl.Line = rs.line
		levels = append(levels, pl)
	}
	return levels, skipped, nil
}

func parseLevelRow(header, cells []string) (PriorityLevel, string) {
	if len(cells) != len(header) {
		return PriorityLevel{}, fmt.Sprintf("%d cells, want %d", len(cells), len(header))
	}
	var pl PriorityLevel
	ints := map[string]*int{
		"ActiveQueues": &pl.ActiveQueues, "WaitingRequests": &pl.WaitingRequests,
		"ExecutingRequests": &pl.ExecutingRequests, "DispatchedRequests": &pl.DispatchedRequests,
		"RejectedRequests": &pl.RejectedRequests, "TimedoutRequests": &pl.TimedoutRequests,
		"CancelledRequests": &pl.CancelledRequests,
	}
	bools := map[string]*bool{"IsIdle": &pl.IsIdle, "IsQuiescing": &pl.IsQuiescing}
	for i, h := range header {
		v := cells[i]
		switch {
		case h == "PriorityLevelName":
			pl.Name = v
		case ints[h] != nil:
			n, err := strconv.Atoi(v)
			if err != nil {
				return PriorityLevel{}, fmt.Sprintf("field %s: %q is not an integer", h, v)
			}
			*ints[h] = n
		case bools[h] != nil:
			b, err := strconv.ParseBool(v)
			if err != nil {
				return PriorityLevel{}, fmt.Sprintf("field %s: %q is not a boolean", h, v)
			}
			*bools[h] = b
		}
	}
	if pl.Name == "" {
		return PriorityLevel{}, "field PriorityLevelName is empty"
	}
	return pl, ""
}
