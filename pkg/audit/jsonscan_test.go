package audit

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The walker reads the members of an object as encoding/json would, and
// refuses what is not JSON.
func TestMembers(t *testing.T) {
	tests := []struct {
		in      string
		want    []string // key=value
		wantErr bool
	}{
		{`{}`, nil, false},
		{` {"a" : 1 , "b":[1,{"c":"}"}],"d\"e":"x\"y"} `, []string{`a=1`, `b=[1,{"c":"}"}]`, `d\"e="x\"y"`}, false},
		{`{"a":true,"b":null,"c":-1.5e3}`, []string{"a=true", "b=null", "c=-1.5e3"}, false},
		{`{"a":NaN}`, nil, true},
		{`{"a":1}x`, []string{"a=1"}, true},
		{`{"a":[1,2}`, nil, true},
		{`{"a" 1}`, nil, true},
		{`{"a":"b`, nil, true},
		{`[1]`, nil, true},
	}
	for _, tc := range tests {
		var got []string
		err := members([]byte(tc.in), func(k, v []byte) bool {
			got = append(got, string(k)+"="+string(v))
			return true
		})
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err %v, want an error: %v", tc.in, err, tc.wantErr)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" && !tc.wantErr {
			t.Errorf("%s: members (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestUnquote(t *testing.T) {
	for in, want := range map[string]string{
		`"plain"`:             "plain",
		`"a\u0026b\n\"c\"\\"`: "a&b\n\"c\"\\",
		`"\ud83d\ude00"`:      "😀",
		`"\ud800x"`:           "\uFFFDx",
		`"\u202e"`:            "\u202e",
	} {
		got, ok := unquote(nil, []byte(in))
		if !ok || string(got) != want {
			t.Errorf("unquote(%s) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{`"\x"`, `"\u12"`, `plain`, `"`, `"\`} {
		if _, ok := unquote(nil, []byte(in)); ok {
			t.Errorf("unquote(%s) read, want refused", in)
		}
	}
}

func TestParseTime(t *testing.T) {
	for in, want := range map[string]time.Time{
		"2026-11-29T10:22:03.338000Z":    time.Date(2026, 11, 29, 10, 22, 3, 338000000, time.UTC),
		"2026-11-29T10:22:03Z":           time.Date(2026, 11, 29, 10, 22, 3, 0, time.UTC),
		"2026-11-29T11:22:03.5+01:00":    time.Date(2026, 11, 29, 10, 22, 3, 500000000, time.UTC),
		"2026-11-29T10:22:03.123456789Z": time.Date(2026, 11, 29, 10, 22, 3, 123456789, time.UTC),
	} {
		got, ok := parseTime([]byte(in))
		if !ok || !got.Equal(want) {
			t.Errorf("parseTime(%s) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"2026-02-31T10:00:00Z", "NaN", "2026-11-29T25:00:00Z", "2026-11-29T10:22:03.Z", ""} {
		if _, ok := parseTime([]byte(in)); ok {
			t.Errorf("parseTime(%s) read, want refused", in)
		}
	}
}
