package v1alpha1

import (
	"encoding/json"
	"testing"
)

func TestByteSizeJSON(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ByteSize
		err  string
	}{
		{in: `4096`, want: 4096},
		{in: `"20Ki"`, want: 20 << 10},
		{in: `"4MiB"`, want: 4 << 20},
		{in: `"1M"`, want: 1_000_000},
		{in: `"512"`, want: 512},
		{in: `"lots"`, err: `invalid size "lots": use bytes or a quantity such as 20Ki or 4Mi`},
		{in: `"1.5"`, err: `invalid size "1.5": not a whole number of bytes`},
		{in: `1.5`, err: `invalid size 1.5: use bytes or a quantity such as "20Ki"`},
		{in: `true`, err: `invalid size true: use bytes or a quantity such as "20Ki"`},
	} {
		var got ByteSize
		err := json.Unmarshal([]byte(tc.in), &got)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != tc.want || gotErr != tc.err {
			t.Errorf("%s: %d, %q; want %d, %q", tc.in, got, gotErr, tc.want, tc.err)
		}
	}
	// Written as a plain number, whatever it was read from.
	one := 1
	roundTrip(t, Transport{Window: 4 << 20, Refresh: RefreshHalfWindow, Lookahead: &one}, `{"window":4194304,"refresh":"half-window","lookahead":1}`)
}
