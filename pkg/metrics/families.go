package metrics

import (
	"bytes"
	"strings"
)

// Reading a few families of a large exposition (the pause histogram, the
// process start time) need not parse all of it: Parser.Families blanks
// every line of the other families before expfmt sees the text, so the
// parse costs a scan of the lines plus the parse of the families kept.
// A blanked line keeps its newline, so line numbers (in errors and in
// Sample.Skipped) stay those of the input.
//
// Which family a line belongs to is decided as expfmt's text parser
// decides it (prometheus/common v0.73.1 expfmt/text_parse.go):
//   - a "# HELP" or "# TYPE" line names its family after the keyword
//     (startComment, line 224); other comments belong to none;
//   - a sample's name is read before its labels (readingMetricName, line
//     288), or first inside the braces in the quoted UTF-8 form
//     {"name", ...} (startLabelName, line 338);
//   - a name that is not a family seen so far is the _sum or _count of a
//     summary, or the _bucket, _sum or _count of a histogram, when that
//     family was declared so, and otherwise a family of its own
//     (setOrCreateCurrentMF, line 903).
//
// The scan sees the whole input at once, while Parse restarts the parser
// after a syntax error (a fresh family table); the two differ only on
// input broken inside a family's own lines, whose rest Parse skips anyway.

// keepFamilies returns data with the lines of every family not in want
// blanked. A last line without a newline is kept as it is: Parse reports
// it as truncated.
func keepFamilies(data []byte, want map[string]bool) []byte {
	out := make([]byte, 0, 4096)
	lf := lineFamilies{types: map[string]string{}}
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return append(out, data...)
		}
		line := data[:i+1]
		data = data[i+1:]
		if f, ok := lf.of(line); ok && want[f] {
			out = append(out, line...)
		} else {
			out = append(out, '\n')
		}
	}
	return out
}

// lineFamilies names the family of each line of an exposition, read in
// order.
type lineFamilies struct {
	// types are the families seen so far with their TYPE in upper case,
	// as expfmt compares it ("UNTYPED" once a sample came first, "" for a
	// family only named by a HELP line so far).
	types map[string]string
}

// of is the family line belongs to; false for a blank line, a plain
// comment or a line with no name the parser would read.
func (lf *lineFamilies) of(line []byte) (string, bool) {
	p := skipBlankTab(line, 0)
	if p == len(line) {
		return "", false
	}
	switch line[p] {
	case '#':
		return lf.comment(line, p+1)
	case '{':
		name, q := readName(line, skipBlankTab(line, p+1), false)
		q = skipBlankTab(line, q)
		if name == "" || q == len(line) || (line[q] != ',' && line[q] != '}') {
			return "", false
		}
		return lf.sample(name), true
	}
	name, _ := readName(line, p, true)
	if name == "" {
		return "", false
	}
	return lf.sample(name), true
}

// comment is the family of a HELP or TYPE line, whose keyword starts
// after p; a TYPE line declares its family's type.
func (lf *lineFamilies) comment(line []byte, p int) (string, bool) {
	p = skipBlankTab(line, p)
	end := p
	for end < len(line) && line[end] != ' ' && line[end] != '\t' && line[end] != '\n' {
		end++
	}
	keyword := string(line[p:end])
	if keyword != "HELP" && keyword != "TYPE" {
		return "", false
	}
	name, q := readName(line, skipBlankTab(line, end), true)
	if name == "" || q == len(line) || line[q] == '\n' {
		// The parser ignores a HELP or TYPE line that ends at its name.
		return "", false
	}
	fam := lf.family(name)
	if keyword == "TYPE" && lf.types[fam] == "" {
		lf.types[fam] = strings.ToUpper(string(bytes.TrimSpace(line[q:])))
	}
	return fam, true
}

// sample is the family of a sample named name; a family a sample comes
// first in is untyped.
func (lf *lineFamilies) sample(name string) string {
	fam := lf.family(name)
	if lf.types[fam] == "" {
		lf.types[fam] = "UNTYPED"
	}
	return fam
}

// family is the family name belongs to, as setOrCreateCurrentMF finds
// it: the family of that name, else the summary or histogram it is a
// part of, else a new family.
func (lf *lineFamilies) family(name string) string {
	if _, ok := lf.types[name]; ok {
		return name
	}
	if base, ok := cutSuffix(name, "_sum", "_count"); ok && lf.types[base] == "SUMMARY" {
		return base
	}
	if base, ok := cutSuffix(name, "_bucket", "_sum", "_count"); ok {
		switch lf.types[base] {
		case "HISTOGRAM", "GAUGE_HISTOGRAM", "GAUGEHISTOGRAM":
			return base
		}
	}
	lf.types[name] = ""
	return name
}

// cutSuffix is name without the first of suffixes it ends with (and
// longer than).
func cutSuffix(name string, suffixes ...string) (string, bool) {
	for _, s := range suffixes {
		if len(name) > len(s) && strings.HasSuffix(name, s) {
			return name[:len(name)-len(s)], true
		}
	}
	return "", false
}

// readName reads a metric name (colons allowed) or, in braces, a label
// name at p, as expfmt's readTokenAsMetricName (text_parse.go:767) and
// readTokenAsLabelName (line 817): a run of name bytes, or a quoted UTF-8
// name with \\, \n and \" escapes. It returns the name ("" when none or
// malformed) and the offset after it.
func readName(line []byte, p int, colon bool) (string, int) {
	if p == len(line) || !nameByte(line[p], colon, false) || line[p] >= '0' && line[p] <= '9' {
		return "", p
	}
	var b []byte
	quoted, escaped := false, false
	for ; p < len(line); p++ {
		c := line[p]
		switch {
		case escaped:
			switch c {
			case '\\', '"':
				b = append(b, c)
			case 'n':
				b = append(b, '\n')
			default:
				return "", p
			}
			escaped = false
			continue
		case c == '"':
			quoted = !quoted
			if !quoted {
				return string(b), p + 1
			}
			continue
		case c == '\n':
			return "", p
		case quoted && c == '\\':
			escaped = true
			continue
		case !nameByte(c, colon, quoted):
			return string(b), p
		}
		b = append(b, c)
	}
	return string(b), p
}

// nameByte reports whether c continues a name: letters, digits, '_',
// ':' in a metric name, '"', and any byte inside quotes.
func nameByte(c byte, colon, quoted bool) bool {
	return quoted || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '"' || (colon && c == ':')
}

func skipBlankTab(line []byte, p int) int {
	for p < len(line) && (line[p] == ' ' || line[p] == '\t') {
		p++
	}
	return p
}
