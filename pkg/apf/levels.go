package apf

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ParsePriorityLevels reads a dump_priority_levels dump. Columns are taken
// by header name; columns this release does not know are ignored and
// missing ones stay zero.
func ParsePriorityLevels(r io.Reader) ([]PriorityLevel, []Skipped, error) {
	rs := newRows(r)
	header, ok, err := rs.next()
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, errors.New("empty input: no dump_priority_levels header")
	}
	if len(header) < 2 || header[0] != "PriorityLevelName" || header[1] != "ActiveQueues" {
		return nil, nil, &SyntaxError{LineNo: rs.line, Msg: fmt.Sprintf("not an APF dump_priority_levels: header starts %q, want %q", strings.Join(header[:min(2, len(header))], ", "), PriorityLevelsHeader)}
	}
	var levels []PriorityLevel
	var skipped []Skipped
	for {
		cells, ok, err := rs.next()
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			break
		}
		pl, reason := parseLevelRow(header, cells)
		if reason != "" {
			skipped = append(skipped, Skipped{Line: rs.line, Reason: reason})
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
