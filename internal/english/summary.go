package english

import "fmt"

// PerKind is how many warnings of one kind Summary keeps before it counts
// the rest: "and N more like it".
const PerKind = 3

// Summary gathers warnings and keeps the first PerKind of each kind, in
// the order added; the others of a kind become one line. 100,000 stray
// files make 4 lines, not 100,000. The zero value is ready to use; not
// safe for concurrent use.
type Summary struct {
	lines []entry
	kinds map[string]*kindCount
}

type entry struct {
	text string
	kind *kindCount
	// last marks the line after which the kind's count is written.
	last bool
}

type kindCount struct {
	kept, more int
	// like names the kind in the count line ("skipped files").
	like string
}

// Add records msg, a warning of kind; like names the kind in its count
// line ("and 99997 more like it: skipped files").
func (s *Summary) Add(kind, like, msg string) {
	if s.kinds == nil {
		s.kinds = map[string]*kindCount{}
	}
	k, ok := s.kinds[kind]
	if !ok {
		k = &kindCount{like: like}
		s.kinds[kind] = k
	}
	if k.kept == PerKind {
		k.more++
		return
	}
	if k.kept > 0 {
		for i := len(s.lines) - 1; i >= 0; i-- {
			if s.lines[i].kind == k {
				s.lines[i].last = false
				break
			}
		}
	}
	k.kept++
	s.lines = append(s.lines, entry{text: msg, kind: k, last: true})
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
	for _, e := range s.lines {
		out = append(out, e.text)
		if e.last && e.kind.more > 0 {
			out = append(out, fmt.Sprintf("and %d more like it (%s)", e.kind.more, e.kind.like))
		}
	}
	return out
}
