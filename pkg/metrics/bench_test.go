package metrics

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func readCapture(b *testing.B) []byte {
	b.Helper()
	data, err := os.ReadFile(filepath.Join(captures, "t1", "metrics.txt"))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkParse parses the real 2.3 MB /metrics capture.
func BenchmarkParse(b *testing.B) {
	data := readCapture(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(data), "t1"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseFamilies parses the pause histogram alone of the same
// capture (Parser.Families), as the cost reading does.
func BenchmarkParseFamilies(b *testing.B) {
	data := readCapture(b)
	p := Parser{Families: []string{SchedPausesOther}}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Parse(bytes.NewReader(data), "t1"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExtract maps the parsed capture to the watch model.
func BenchmarkExtract(b *testing.B) {
	data := readCapture(b)
	s, err := Parse(bytes.NewReader(data), "t1")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		Extract(s)
	}
}

// BenchmarkRates compares the two captures.
func BenchmarkRates(b *testing.B) {
	first, second := Extract(parseCapture(b, "t1")), Extract(parseCapture(b, "t2"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Rates(first, second, 0); err != nil {
			b.Fatal(err)
		}
	}
}
