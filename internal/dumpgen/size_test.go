package dumpgen_test

import (
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		err  string
	}{
		{in: "10000", want: 10000},
		{in: "100k", want: 100_000},
		{in: "1M", want: 1_000_000},
		{in: "3M", want: 3_000_000},
		{in: "0", err: `bad size "0": use a number of goroutines like 10000, 100k or 1M`},
		{in: "0k", err: `bad size "0k": use a number of goroutines like 10000, 100k or 1M`},
		{in: "1.5M", err: `bad size "1.5M": use a number of goroutines like 10000, 100k or 1M`},
		{in: "k", err: `bad size "k": use a number of goroutines like 10000, 100k or 1M`},
		{in: "10K", err: `bad size "10K": use a number of goroutines like 10000, 100k or 1M`},
		{in: "", err: `bad size "": use a number of goroutines like 10000, 100k or 1M`},
	} {
		got, err := dumpgen.ParseSize(tc.in)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != tc.want || gotErr != tc.err {
			t.Errorf("ParseSize(%q) = %d, %q; want %d, %q", tc.in, got, gotErr, tc.want, tc.err)
		}
	}
}
