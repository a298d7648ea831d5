package report

// appendIndent appends src, compact JSON as encoding/json writes it (valid,
// no whitespace between tokens), to dst indented exactly as json.Indent(dst,
// src, prefix, indent) would indent it: each element on a new line
// starting with prefix and one indent per level of nesting, ": " between
// a key and its value, empty objects and arrays kept as {} and [].
// json.Indent validates its input with a scanner as it goes, which took
// 15% of the CPU time of a relist storm's report (50,000 findings, 128 MB
// of JSON); input from json.Marshal needs none. It is O(len(src)).
func appendIndent(dst, src []byte, prefix, indent string) []byte {
	depth := 0
	open := false // an object or array was just opened: its newline waits
	for i := 0; i < len(src); i++ {
		c := src[i]
		if open && c != ']' && c != '}' {
			open = false
			dst = appendNewline(dst, prefix, indent, depth)
		}
		switch c {
		case '"':
			// Copy the string whole: its bytes are not structure.
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(src))
			dst = append(dst, src[i:j]...)
			i = j - 1
		case '{', '[':
			dst = append(dst, c)
			open = true
			depth++
		case ',':
			dst = append(dst, c)
			dst = appendNewline(dst, prefix, indent, depth)
		case ':':
			dst = append(dst, c, ' ')
		case '}', ']':
			depth--
			if open {
				open = false // empty: {} or []
			} else {
				dst = appendNewline(dst, prefix, indent, depth)
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

func appendNewline(dst []byte, prefix, indent string, depth int) []byte {
	dst = append(dst, '\n')
	dst = append(dst, prefix...)
	for range depth {
		dst = append(dst, indent...)
	}
	return dst
}
