package report

import "io"

// EscapeWriter returns a writer that escapes (Escape) what is written
// through it, for line-at-a-time text a server chose: the live commands'
// progress lines.
func EscapeWriter(w io.Writer) io.Writer { return escapeWriter{w} }
