package apf

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRequestExecutingSeats(t *testing.T) {
	tests := []struct {
		row       reqRow
		executing bool
		seats     int
	}{
		{exemptRow, true, 1},
		{slowRow, true, 1},
		{waitingRow, false, 8},
		{subresourceRow, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.row.pl, func(t *testing.T) {
			r := tt.row.want(v037, true, 2)
			if r.Executing() != tt.executing || r.Seats() != tt.seats {
				t.Errorf("Executing() %v, Seats() %d; want %v, %d", r.Executing(), r.Seats(), tt.executing, tt.seats)
			}
		})
	}
}

// TestRows: blank lines are skipped, CR and the blanks around cells are
// dropped while the raw cells keep them, and input that is not a dump
// (NUL bytes, endless lines, too many rows) is an error naming its line.
func TestRows(t *testing.T) {
	type row struct {
		Line       int
		Cells, Raw []string
	}
	for _, tc := range []struct {
		name, in string
		want     []row
		err      string
		errLine  int
	}{
		{name: "cells", in: "a, b ,c\r\n\n  \r\nd\n", want: []row{{1, []string{"a", "b", "c"}, []string{"a", " b ", "c"}}, {4, []string{"d"}, []string{"d"}}}},
		{name: "NUL", in: "a\nb\x00c\n", want: []row{{1, []string{"a"}, []string{"a"}}}, err: "line 2: binary data (NUL byte): not an APF dump", errLine: 2},
		{name: "long", in: "a\n" + strings.Repeat("x", maxLine+1), want: []row{{1, []string{"a"}, []string{"a"}}}, err: "line 2: line is longer than 65536 bytes: not an APF dump", errLine: 2},
		{name: "too many rows", in: strings.Repeat("\n", maxRows) + "x\n", err: "line 100001: more than 100000 rows: not an APF dump", errLine: 100001},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := newRows(strings.NewReader(tc.in))
			var got []row
			var err error
			for {
				cells, raw, ok, e := rs.nextRaw()
				if e != nil || !ok {
					err = e
					break
				}
				got = append(got, row{rs.line, cells, raw})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
				var se *SyntaxError
				if !errors.As(err, &se) || se.Line() != tc.errLine || se.Reason() == "" {
					t.Errorf("err %#v: want a *SyntaxError with its line and reason", err)
				}
			}
			if gotErr != tc.err {
				t.Errorf("err = %q, want %q", gotErr, tc.err)
			}
		})
	}
}

func TestParseTime(t *testing.T) {
	got, err := parseTime("2026-11-29T10:23:09.123456789Z")
	if err != nil || !got.Equal(time.Date(2026, 11, 29, 10, 23, 9, 123456789, time.UTC)) {
		t.Errorf("parseTime = %v, %v", got, err)
	}
	if _, err := parseTime("2026-11-29 10:23:09"); err == nil {
		t.Error("parseTime accepted a time without T and zone")
	}
	if diff := cmp.Diff(map[string]int{"a": 0, "b": 1}, headerIndex([]string{"a", "b"})); diff != "" {
		t.Errorf("headerIndex (-want +got):\n%s", diff)
	}
}
