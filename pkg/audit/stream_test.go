package audit

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// A document cut short keeps what it read and counts the cut; a line cut
// short is skipped.
func TestTruncated(t *testing.T) {
	ev := strings.TrimSpace(line("a", "ResponseStarted", "watch", "u", "/api/v1/pods?watch=true", "10.0.0.1", "ua"))
	for name, in := range map[string]string{
		"array":   "[\n" + ev + ",\n" + ev[:len(ev)/2],
		"wrapper": `{"records":[` + "\n" + `{"category":"kube-audit","properties":{"log":` + quote(ev) + `}},` + "\n" + `{"category":"kube-au`,
		"lines":   ev + "\n" + ev[:len(ev)/2],
	} {
		t.Run(name, func(t *testing.T) {
			got, err := Read(context.Background(), strings.NewReader(in), "cut.json", DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Events) != 1 || got.SkippedCount != 1 {
				t.Errorf("%d events, skipped %v: want 1 and the cut", len(got.Events), got.Skipped)
			}
		})
	}
}

func quote(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, c := range []byte(s) {
		if c == '"' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String()
}

// A byte order mark, as Windows tools save JSON, is not part of the log.
func TestByteOrderMark(t *testing.T) {
	ev := line("a", "ResponseStarted", "watch", "u", "/api/v1/pods?watch=true", "10.0.0.1", "ua")
	for name, in := range map[string]string{"lines": ev, "array": "[" + strings.TrimSpace(ev) + "]"} {
		got, err := Read(context.Background(), strings.NewReader("\xef\xbb\xbf"+in), "bom.json", DefaultLimits())
		if err != nil || len(got.Events) != 1 || got.SkippedCount != 0 {
			t.Errorf("%s: err %v, log %+v: want its one event", name, err, got)
		}
	}
}
