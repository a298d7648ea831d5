package english

import "fmt"

// PerKind is how many warnings of one kind Summary keeps before it counts
// the rest: "and N more like it".
const PerKind = 3

// Summary gathers warnings and keeps the first PerKind of each kind, in
// the order added; the others of a kind become one line after the last one
// kept, "and N more like it". 100,000 stray files make 4 lines, not
// 100,000. The zero value is ready to use; not safe for concurrent use.
type Summary struct {
	lines []entry
	kinds map[string]*kindCount
}

type entry struct {
	text string
	kind *kindCount
}

type kindCount struct {
	kept, more int
	// last is the index in lines of the kind's last kept line.
	last int
}

// Add records msg, a warning of kind.
func (s *Summary) Add(kind, msg string) {
	if s.kinds == nil {
		s.kinds = map[string]*kindCount{}
	}
	k, ok := s.kinds[kind]
	if !ok {
		k = &kindCount{}
		s.kinds[kind] = k
	}
	if k.kept == PerKind {
		k.more++
		return
	}
	k.kept++
	k.last = len(s.lines)
	s.lines = append(s.lines, entry{text: msg, kind: k})
}

// Len is the number of warnings added.
func (s *Summary) Len() int {
	n := 0
	for _, k := range s.kinds {
		n += k.kept + k.more
	}
	return n
}

// Lines returns the kept warnings, each kind's count line after its
// last kept one.
func (s *Summary) Lines() []string {
	var out []string
	for i, e := range s.lines {
		out = append(out, e.text)
		if e.kind.last == i && e.kind.more > 0 {
			out = append(out, fmt.Sprintf("and %d more like it", e.kind.more))
		}
	}
	return out
}

// Summarize is Summary over lines, each of the kind kindOf gives it.
func Summarize(lines []string, kindOf func(string) string) []string {
	var s Summary
	for _, l := range lines {
		s.Add(kindOf(l), l)
	}
	return s.Lines()
}
