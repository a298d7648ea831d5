package watches

import (
	"strings"
	"sync"
	"unsafe"

	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// nameInfo is what the classifier decided about one function name: its
// module-build form (CanonicalFunc), its role, and whether it runs
// k8s.io/apiserver code (IsAPIServerFrame).
type nameInfo struct {
	canon     string
	role      role
	apiServer bool
}

// maxNames bounds a names memo: a dump naming more distinct functions is
// hostile (a kube-apiserver's names are a few tens of thousands), and its
// other names are decided each time they are seen.
const maxNames = 1 << 17

// names decides each function name once: a dump's names repeat on every
// goroutine, and the scanner interns them (one string per name), so most
// frames are answered by the string's address alone (recent: a
// direct-mapped cache of names by address and length, which holds the
// strings it keys, so an address is never reused while it is there), and
// the others by one lookup of the memo. Not safe for concurrent use.
type names struct {
	memo   map[string]nameInfo
	recent *[recentNames]recentName
	// decided counts the names decided (decideName): once per distinct
	// name, however many frames name it
	// (TestReadDumpCanonicalisesOncePerName).
	decided int
	// shared, once made (sharedNames), decides for the scanner's workers
	// too, so that a name is canonicalised once in all.
	shared *sharedNames
}

// sharedNames decides names for several goroutines at once: a parallel
// scan's workers ask it which frames keep their arguments (keepArgs)
// while names, the classifier's, asks it what it has not memoised. Safe
// for concurrent use.
type sharedNames struct {
	mu sync.Mutex
	m  map[string]nameInfo
}

// sharedMemo returns n's sharedNames, made on the first call (which must
// come before any goroutine uses it).
func (n *names) sharedMemo() *sharedNames {
	if n.shared == nil {
		n.shared = &sharedNames{m: make(map[string]nameInfo, 1024)}
	}
	return n.shared
}

// decide is decideName through the shared memo.
func (s *sharedNames) decide(fn string) nameInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.m[fn]; ok {
		return i
	}
	i := decideName(fn)
	if len(s.m) < maxNames {
		s.m[fn] = i
	}
	return i
}

// recentNames is the size of names' cache by address: a power of two, a
// few times the distinct names of a dump's watch path.
const recentNames = 1 << 12

// recentName is one slot of names' cache by address.
type recentName struct {
	p    *byte
	n    int
	info nameInfo
}

// info returns what fn is.
func (n *names) info(fn string) nameInfo {
	p := unsafe.StringData(fn)
	if n.recent == nil {
		n.recent = new([recentNames]recentName)
	}
	slot := &n.recent[(uintptr(unsafe.Pointer(p))>>4^uintptr(len(fn)))&(recentNames-1)]
	if slot.p == p && slot.n == len(fn) && p != nil {
		return slot.info
	}
	i := n.lookup(fn)
	*slot = recentName{p: p, n: len(fn), info: i}
	return i
}

// lookup is info through the memo.
func (n *names) lookup(fn string) nameInfo {
	if i, ok := n.memo[fn]; ok {
		return i
	}
	var i nameInfo
	if n.shared != nil {
		i = n.shared.decide(fn)
	} else {
		i = decideName(fn)
	}
	n.decided++
	if n.memo == nil {
		n.memo = make(map[string]nameInfo, 1024)
	}
	if len(n.memo) < maxNames {
		n.memo[fn] = i
	}
	return i
}

// role returns fn's role.
func (n *names) role(fn string) role { return n.info(fn).role }

// decideName is nameInfo without the memo: the role of a module-build name
// is one lookup; only a name the lookup misses is canonicalised, and
// looked up again when that cut a build prefix.
func decideName(fn string) nameInfo {
	if r, ok := roleByName[fn]; ok {
		return nameInfo{canon: fn, role: r, apiServer: strings.HasPrefix(fn, apiServerPrefix)}
	}
	c := CanonicalFunc(fn)
	return nameInfo{canon: c, role: roleByName[c], apiServer: strings.HasPrefix(c, apiServerPrefix)}
}

// roleOf is a function name's role without a memo, for callers that look
// at a few names (one goroutine at a time).
func roleOf(fn string) role { return decideName(fn).role }

// stack is a goroutine's frames with the role of each, innermost first,
// and its creator's role when it names one (hasCreator: debug=2 dumps).
// apiServer (set by resolve alone) says a frame runs k8s.io/apiserver
// code.
type stack struct {
	frames     []stacks.Frame
	roles      []role
	created    role
	hasCreator bool
	apiServer  bool
}

// resolve canonicalises the function names of g in place and returns its
// stack, reusing buf for the roles.
func (n *names) resolve(g *stacks.Goroutine, buf []role) stack {
	buf = buf[:0]
	apiServer := false
	for i := range g.Frames {
		info := n.info(g.Frames[i].Func)
		g.Frames[i].Func = info.canon
		buf = append(buf, info.role)
		apiServer = apiServer || info.apiServer
	}
	st := stack{frames: g.Frames, roles: buf, apiServer: apiServer}
	if g.CreatedBy.Func != "" {
		info := n.info(g.CreatedBy.Func)
		g.CreatedBy.Func = info.canon
		st.created, st.hasCreator = info.role, true
	}
	return st
}

// oneStack is the stack of one goroutine without a memo and without
// changing it, for callers that look at goroutines one by one.
func oneStack(g *stacks.Goroutine) stack {
	st := stack{frames: g.Frames, roles: make([]role, len(g.Frames))}
	for i, f := range g.Frames {
		st.roles[i] = roleOf(f.Func)
	}
	if g.CreatedBy.Func != "" {
		st.created, st.hasCreator = roleOf(g.CreatedBy.Func), true
	}
	return st
}

// stackOf is the stack of frames without changing them, with roles from n.
func (n *names) stackOf(frames []stacks.Frame, buf []role) stack {
	buf = buf[:0]
	for _, f := range frames {
		buf = append(buf, n.role(f.Func))
	}
	return stack{frames: frames, roles: buf}
}

// top is the index of the innermost non-runtime frame (stacks.TopFunc),
// -1 for an empty stack.
func (s stack) top() int {
	t := stacks.TopFunc(s.frames)
	for i := range s.frames {
		if s.frames[i].Func == t {
			return i
		}
	}
	return -1
}

// topRole is the role of the innermost non-runtime frame.
func (s stack) topRole() role {
	if i := s.top(); i >= 0 {
		return s.roles[i]
	}
	return roleNone
}

// entry is the index of the frame the goroutine started in: its outermost
// frame, skipping the runtime.goexit frame dumps show at
// GOTRACEBACK=system and above (runtime/traceback.go prints it when
// showing runtime frames); -1 when there is none.
func (s stack) entry() int {
	for i := len(s.frames) - 1; i >= 0; i-- {
		if s.frames[i].Func != "runtime.goexit" {
			return i
		}
	}
	return -1
}

// entryRole is the role of the frame the goroutine started in.
func (s stack) entryRole() role {
	if i := s.entry(); i >= 0 {
		return s.roles[i]
	}
	return roleNone
}

// has reports whether any frame has role r, and the first one's index.
func (s stack) has(r role) (int, bool) {
	for i, fr := range s.roles {
		if fr == r {
			return i, true
		}
	}
	return -1, false
}

// sub is the stack's innermost frames up to (not including) i.
func (s stack) sub(i int) stack {
	return stack{frames: s.frames[:i], roles: s.roles[:i], created: s.created, hasCreator: s.hasCreator}
}
