package report

import (
	"fmt"
	"io"
	"unicode"
	"unicode/utf8"
)

// What each output form does with the bytes that came from outside (user
// names, request paths, /version, error messages), decided here once:
//
//   - table, wide, name, stderr: escaped (EscapeCell, Escape); serve's
//     log lines are JSON, escaped as json is (JSONLines).
//   - json: escaped without loss. Every character a terminal acts on is
//     written as a JSON escape (\u001b, \u202e): encoding/json already
//     escapes C0 controls; jsonSafe adds DEL, the C1 controls and the
//     bidirectional formatting characters. A JSON decoder reads the
//     server's very string back.
//   - yaml: escaped without loss, as YAML escapes (writeYAML): a string
//     holding such a character is double-quoted, where ESC is \e and
//     U+202E \u202e. A YAML decoder reads the value JSON holds.
//   - jsonpath, go-template: raw into a pipe or a file, as kubectl
//     prints them (a script gets the server's bytes); escaped
//     (EscapeCell) when the output is a terminal (Options.Terminal).
//
// EscapeValues applies an escape to every string of a decoded document.

// EscapeValues returns v (a document decoded from JSON: maps, slices,
// strings, numbers) with every string, map keys included, passed through
// esc.
func EscapeValues(v any, esc func(string) string) any {
	switch x := v.(type) {
	case string:
		return esc(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[esc(k)] = EscapeValues(e, esc)
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = EscapeValues(e, esc)
		}
		return x
	}
	return v
}

// JSONLines returns a writer of JSON text written by others (serve's
// slog lines) that escapes, as the json output does, each character a
// terminal acts on that encoding/json leaves raw (log/slog's JSON
// handler leaves them raw too). Lines end in a newline, so nothing is
// held back at the end.
func JSONLines(w io.Writer) io.Writer { return &jsonSafe{w: w} }

// jsonSafe is a writer of JSON text that writes each character a
// terminal acts on and encoding/json leaves raw (DEL, C1 controls,
// bidirectional formatting characters) as a \u escape. In JSON text such
// characters can only sit inside strings, where the escape decodes to the
// same character. A character split across writes is held until whole.
type jsonSafe struct {
	w    io.Writer
	held []byte
	err  error
}

func (j *jsonSafe) Write(p []byte) (int, error) {
	if j.err != nil {
		return 0, j.err
	}
	b := p
	if len(j.held) > 0 {
		b = append(j.held, p...)
		j.held = nil
	}
	// Runs of characters written as they are go to w in place: the
	// report is mostly ASCII, and a storm's is over 100 MB in one Write
	// (copying it byte by byte into a growing buffer cost a third of the
	// run, mostly in the garbage collector).
	start := 0
	for i := 0; i < len(b); {
		if c := b[i]; c < utf8.RuneSelf && c != 0x7f {
			i++
			continue
		}
		if !utf8.FullRune(b[i:]) {
			j.held = append([]byte(nil), b[i:]...)
			b = b[:i]
			break
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError || !(unicode.IsControl(r) || isBidi(r)) {
			i += size
			continue
		}
		if !j.write(b[start:i]) || !j.write(fmt.Appendf(nil, `\u%04x`, r)) {
			return 0, j.err
		}
		i += size
		start = i
	}
	if !j.write(b[start:]) {
		return 0, j.err
	}
	return len(p), nil
}

// write writes b to w, keeping its error; false when it failed.
func (j *jsonSafe) write(b []byte) bool {
	if len(b) == 0 || j.err != nil {
		return j.err == nil
	}
	_, j.err = j.w.Write(b)
	return j.err == nil
}

// flush writes what is held (bytes that never became a character).
func (j *jsonSafe) flush() error {
	if j.err != nil || len(j.held) == 0 {
		return j.err
	}
	_, j.err = j.w.Write(j.held)
	j.held = nil
	return j.err
}
