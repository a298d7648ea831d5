package audit

import (
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// This file reads the few members of a JSON object that name a request,
// without decoding the rest: encoding/json spent most of a million-event
// read building values nobody reads. It validates what it walks enough
// never to loop, recurse or index out of range on any input; a value it
// cannot walk is an error.

var errJSON = errors.New("not a JSON object")

// isSpace reports JSON whitespace.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// stringEnd returns the index just past the JSON string starting at
// b[i] (a '"').
func stringEnd(b []byte, i int) (int, error) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		}
	}
	return 0, errors.New("a string does not end")
}

// valueEnd returns the index just past the JSON value starting at b[i],
// walking nested values with a depth count, not recursion.
func valueEnd(b []byte, i int) (int, error) {
	depth := 0
	for i < len(b) {
		switch c := b[i]; {
		case c == '"':
			end, err := stringEnd(b, i)
			if err != nil {
				return 0, err
			}
			i = end
		case c == '{' || c == '[':
			depth++
			i++
		case c == '}' || c == ']':
			if depth == 0 {
				return 0, errors.New("a value closes what it did not open")
			}
			depth--
			i++
		default:
			if depth == 0 && (c == ',' || isSpace(c)) {
				return 0, errors.New("a value is missing")
			}
			start := i
			for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != '"' && b[i] != '{' && b[i] != '[' && !isSpace(b[i]) && b[i] != ':' {
				i++
			}
			if i == start {
				i++ // ',' or ':' inside a container
			} else if !scalar(b[start:i]) {
				return 0, fmt.Errorf("%q is not a JSON value", b[start:min(i, start+16)])
			}
		}
		if depth == 0 {
			return i, nil
		}
	}
	return 0, errors.New("a value does not end")
}

// scalar reports a JSON literal or number (NaN, Infinity and 0x1f are
// not).
func scalar(t []byte) bool {
	switch string(t) {
	case "true", "false", "null":
		return true
	}
	i := 0
	if t[0] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	if digits() == 0 {
		return false
	}
	if i < len(t) && t[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		i++
		if i < len(t) && (t[i] == '+' || t[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(t)
}

// members calls fn with the raw key (quotes removed, escapes kept) and
// raw value of each member of the object b holds, whitespace around it
// allowed; fn returning false stops the walk early (what follows is then
// not checked).
func members(b []byte, fn func(key, val []byte) bool) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errJSON
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return trailing(b, i+1)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return errors.New("an object member has no key")
		}
		kend, err := stringEnd(b, i)
		if err != nil {
			return err
		}
		key := b[i+1 : kend-1]
		i = skipSpace(b, kend)
		if i >= len(b) || b[i] != ':' {
			return errors.New("an object key has no ':'")
		}
		i = skipSpace(b, i+1)
		if i >= len(b) {
			return errors.New("an object member has no value")
		}
		vend, err := valueEnd(b, i)
		if err != nil {
			return err
		}
		if !fn(key, b[i:vend]) {
			return nil
		}
		i = skipSpace(b, vend)
		if i >= len(b) {
			return errors.New("an object does not end")
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return trailing(b, i+1)
		default:
			return errors.New("object members are not separated by ','")
		}
	}
}

func trailing(b []byte, i int) error {
	if skipSpace(b, i) != len(b) {
		return errors.New("something follows the object")
	}
	return nil
}

// elements calls fn with each raw element of the array b holds.
func elements(b []byte, fn func(val []byte)) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return errors.New("not an array")
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return nil
	}
	for {
		if i >= len(b) {
			return errors.New("an array does not end")
		}
		end, err := valueEnd(b, i)
		if err != nil {
			return err
		}
		fn(b[i:end])
		i = skipSpace(b, end)
		if i >= len(b) {
			return errors.New("an array does not end")
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return nil
		default:
			return errors.New("array elements are not separated by ','")
		}
	}
}

// unquote appends the text of the raw JSON string v (with its quotes)
// to buf; ok is false when v is not a string.
func unquote(buf, v []byte) (_ []byte, ok bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return buf, false
	}
	v = v[1 : len(v)-1]
	for i := 0; i < len(v); {
		c := v[i]
		if c != '\\' {
			j := i
			for j < len(v) && v[j] != '\\' {
				j++
			}
			buf = append(buf, v[i:j]...)
			i = j
			continue
		}
		if i+1 >= len(v) {
			return buf, false
		}
		switch v[i+1] {
		case '"', '\\', '/':
			buf = append(buf, v[i+1])
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, n := hex4(v[i+2:])
			if n == 0 {
				return buf, false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r2, n2 := hex4(v[min(i+2, len(v)):]); n2 > 0 && i+1 < len(v) && v[i] == '\\' && v[i+1] == 'u' {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						buf = utf8.AppendRune(buf, d)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			buf = utf8.AppendRune(buf, r)
			continue
		default:
			return buf, false
		}
		i += 2
	}
	return buf, true
}

func hex4(b []byte) (rune, int) {
	if len(b) < 4 {
		return 0, 0
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, 0
		}
	}
	return r, 4
}

// jsonInt reads a raw JSON integer within int32; ok is false for
// anything else (a fraction, an exponent, NaN, a string).
func jsonInt(v []byte) (int, bool) {
	if len(v) == 0 || len(v) > 10 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 32)
	return int(n), err == nil
}

// parseTime reads an RFC 3339 time, as the audit log and the providers
// write them ("2026-11-29T10:22:03.338000Z"): a fixed-layout fast path,
// time.Parse for the rest (offsets).
func parseTime(b []byte) (time.Time, bool) {
	if t, ok := fastTime(b); ok {
		return t, true
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	return t, err == nil
}

func fastTime(b []byte) (time.Time, bool) {
	if len(b) < 20 || b[len(b)-1] != 'Z' || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return time.Time{}, false
	}
	num := func(s []byte) (int, bool) {
		n := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	y, ok1 := num(b[0:4])
	mo, ok2 := num(b[5:7])
	d, ok3 := num(b[8:10])
	h, ok4 := num(b[11:13])
	mi, ok5 := num(b[14:16])
	s, ok6 := num(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59 {
		return time.Time{}, false
	}
	ns := 0
	frac := b[19 : len(b)-1]
	if len(frac) > 0 {
		if frac[0] != '.' || len(frac) < 2 || len(frac) > 10 {
			return time.Time{}, false
		}
		f, ok := num(frac[1:])
		if !ok {
			return time.Time{}, false
		}
		for k := len(frac) - 1; k < 9; k++ {
			f *= 10
		}
		ns = f
	}
	t := time.Date(y, time.Month(mo), d, h, mi, s, ns, time.UTC)
	if t.Day() != d { // 31 February
		return time.Time{}, false
	}
	return t, true
}
