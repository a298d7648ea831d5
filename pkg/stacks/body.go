package stacks

import (
	"bytes"
	"fmt"
	"math"
)

// body is where readBody is in a goroutine's frames. Owned by one
// readBody call.
type body struct {
	// inAncestor: after "[originating from goroutine N]:", the frames
	// belong to an ancestor.
	inAncestor bool
	// expectFile: the previous line was a function line, and last is
	// the frame its file line completes.
	expectFile bool
	last       *Frame
}

// readBody reads frames up to the blank line ending the goroutine. It
// returns where the input was cut inside the goroutine, "" when it was
// not.
func (s *Scanner) readBody() (cutAt string) {
	g := &s.g
	var b body
	internFile := s.intern
	if s.SkipFiles {
		internFile = nil
	}
	for {
		line, ok := s.readLine()
		if !ok {
			s.done = true
			if s.err == nil && b.expectFile {
				return fmt.Sprintf("it ends after a function line with no file line (line %d)", s.line)
			}
			return ""
		}
		if s.lastIncomplete {
			s.done = true
			return fmt.Sprintf("it ends in the middle of line %d", s.line)
		}
		if len(line) == 0 {
			if b.expectFile {
				s.skips.add(s.line-1, nil, "function line without its file line")
			}
			return ""
		}
		switch {
		case line[0] == '\t' && b.expectFile && b.last != nil:
			// The file line of the frame before: most lines of a dump.
			if !parseFileLine(line[1:], internFile, b.last) {
				s.skips.add(s.line, line, "malformed file:line")
			}
			b.expectFile = false
		case line[0] == '\t':
			s.tabLine(line)
		// Each prefix below is tried only when the line starts with its
		// first byte: most lines are frames, and most frames start with
		// none of them.
		case line[0] == 'g' && bytes.HasPrefix(line, goroutinePrefix):
			// A header with no blank line before it: the previous goroutine
			// ended here.
			if b.expectFile {
				s.skips.add(s.line-1, nil, "function line without its file line")
			}
			s.pending = append(s.pending[:0], line...)
			s.pendAt = s.line
			return ""
		case b.inAncestor:
			s.ancestorLine(line, &b)
		case line[0] == 'c' && bytes.HasPrefix(line, createdByPrefix):
			s.createdByLine(line, &b)
		case line[0] == '.' && isElided(line):
			g.FramesElided = true
		case line[0] == '[' && bytes.HasPrefix(line, originating):
			// GODEBUG=tracebackancestors: the frames that follow belong to
			// an ancestor, not to this goroutine.
			b.inAncestor = true
		default:
			if !s.frameLine(line, &b) {
				return ""
			}
		}
	}
}

// tabLine reads a line starting with a tab that is not the file line of
// a frame: the note of a stack the runtime could not print, or a stray.
func (s *Scanner) tabLine(line []byte) {
	if bytes.Equal(line[1:], unavailable) {
		s.g.StackUnavailable = true
		return
	}
	s.skips.add(s.line, line, "file line without a function line")
}

// ancestorLine reads a line of an ancestor's frames. With
// GODEBUG=tracebackancestors, after this goroutine's own "created by",
// each ancestor block (runtime/traceback.go printAncestorTraceback) has
// frames, maybe an elision line and its own "created by"; none of it is
// this goroutine's, so its frames are checked and dropped.
func (s *Scanner) ancestorLine(line []byte, b *body) {
	if bytes.HasPrefix(line, originating) {
		return
	}
	if bytes.HasPrefix(line, createdByPrefix) || isElided(line) {
		b.last, b.expectFile = &Frame{}, bytes.HasPrefix(line, createdByPrefix)
		return
	}
	if _, _, ok := splitCall(line); !ok {
		s.skips.add(s.line, line, "not a frame")
		b.expectFile = false
		return
	}
	b.last, b.expectFile = &Frame{}, true
}

// createdByLine reads "created by F" or, since Go 1.21, "created by F in
// goroutine N": the creator, and the parent's id.
func (s *Scanner) createdByLine(line []byte, b *body) {
	g := &s.g
	s.createdBy++
	rest := line[len(createdByPrefix):]
	// "X in goroutine N": the id follows the last space.
	if sp := bytes.LastIndexByte(rest, ' '); sp >= 0 && bytes.HasSuffix(rest[:sp+1], inGoroutine) {
		if id, ok := parseUint(rest[sp+1:]); ok {
			g.ParentID = id
			s.withParent++
			rest = rest[:sp+1-len(inGoroutine)]
		}
	}
	g.CreatedBy = Frame{Func: s.intern(rest)}
	b.last = &g.CreatedBy
	b.expectFile = true
}

// frameLine reads a function line "pkg.F(args)" into a new frame. It
// reports false, with s.err set, when the goroutine has more than
// MaxFrames frames.
func (s *Scanner) frameLine(line []byte, b *body) bool {
	g := &s.g
	fn, args, ok := splitCall(line)
	if !ok {
		s.skips.add(s.line, line, "not a frame")
		b.expectFile = false
		return true
	}
	var f Frame
	if s.SkipArgs && s.KeepArgs != nil {
		n := s.internName(fn, true)
		f.Func = n.s
		if n.keep == keepYes {
			f.Args = string(args)
		}
	} else {
		f.Func = s.intern(fn)
		if !s.SkipArgs {
			f.Args = string(args)
		}
	}
	if len(g.Frames) == MaxFrames {
		s.err = &SyntaxError{LineNo: s.line, Msg: fmt.Sprintf("goroutine %d has more than %d frames: not a dump written by the Go runtime", g.ID, MaxFrames)}
		return false
	}
	g.Frames = append(g.Frames, f)
	b.last = &g.Frames[len(g.Frames)-1]
	b.expectFile = true
	return true
}

// isElided recognises "...additional frames elided..." and, since Go 1.21,
// "...N frames elided..." in the middle of a long stack.
func isElided(line []byte) bool {
	return bytes.Equal(line, elided) || bytes.HasPrefix(line, []byte("...")) && bytes.HasSuffix(line, []byte(" frames elided..."))
}

// MaxFrames is the most frames a goroutine may have: the runtime prints at
// most 100 (50 innermost and 50 outermost, then "...N frames elided...";
// runtime/traceback.go tracebackInnerFrames, tracebackOuterFrames).
const MaxFrames = 1024

// splitCall splits "pkg.(*T).f(0x1, {0x2})" into the function name and the
// argument text. Names may hold parentheses and brackets
// ("(*policySource[...]).Run.func7"), arguments do not hold parentheses, so
// the call starts at the last '('.
func splitCall(line []byte) (fn, args []byte, ok bool) {
	if len(line) < 3 || line[len(line)-1] != ')' {
		return nil, nil, false
	}
	// The last '(' found by jumping forward between parentheses with
	// IndexByte: names hold few, and arguments, the bulk of the line, none.
	open := bytes.IndexByte(line, '(')
	if open < 0 {
		return nil, nil, false
	}
	for {
		next := bytes.IndexByte(line[open+1:], '(')
		if next < 0 {
			break
		}
		open += next + 1
	}
	if open == 0 {
		return nil, nil, false
	}
	return line[:open], line[open+1 : len(line)-1], true
}

// parseFileLine reads "path/to/file.go:123 +0x1d" (and the " fp=... sp=...
// pc=..." of GOTRACEBACK=system) into f; with a nil intern, f.File is
// left as it is. Paths may hold ':' (Windows) and
// spaces, so the line number is taken after the last ':' before the offset.
func parseFileLine(b []byte, intern func([]byte) string, f *Frame) bool {
	if i := bytes.Index(b, []byte(" +0x")); i >= 0 {
		b = b[:i]
	} else if i := bytes.Index(b, []byte(" fp=")); i >= 0 {
		b = b[:i]
	}
	colon := bytes.LastIndexByte(b, ':')
	if colon <= 0 {
		return false
	}
	n, ok := parseUint(b[colon+1:])
	if !ok || n > 1<<31 {
		return false
	}
	if intern != nil {
		f.File = intern(b[:colon])
	}
	f.Line = int(n)
	return true
}

// parseUint parses a non-empty decimal number that fits in an int64.
func parseUint(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		// Up to 18 digits cannot overflow; only the 19th needs the check
		// (a division, which per digit would cost more than the rest).
		if len(b) == 19 && n > (math.MaxInt64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}
