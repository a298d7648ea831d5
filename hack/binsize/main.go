// Command binsize prints the size table of docs/development.md ("The
// binary"): the bytes of kubectl-watch_doctor's symbols per Go module, as a
// Markdown table, from a build linked as make build links (cgo off,
// -trimpath) but without -s -w, so that the symbols are there to count.
// With -bin it also prints the size of that stripped binary (make build's).
//
//	make binsize          # builds bin/kubectl-watch_doctor, then runs this
//	go run ./hack/binsize -bin bin/kubectl-watch_doctor
//
// A symbol counts for the module whose path is the longest prefix of its
// package path (go version -m lists the modules); symbols of packages
// without a dot in their first path element are the standard library's;
// the rest (string data, itabs between modules, the linker's tables) is
// "unattributed".
package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

const pkg = "./cmd/kubectl-watch_doctor"

func main() {
	bin := flag.String("bin", "", "make build's binary, whose file size is printed above the table")
	flag.Parse()
	if err := run(*bin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "binsize:", err)
		os.Exit(1)
	}
}

func run(bin string, out io.Writer) error {
	dir, err := os.MkdirTemp("", "binsize")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	full := filepath.Join(dir, "kubectl-watch_doctor")
	build := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-o", full, pkg)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build %s: %w", pkg, err)
	}
	mods, err := modules(full)
	if err != nil {
		return err
	}
	nm, err := exec.Command("go", "tool", "nm", "-size", full).Output()
	if err != nil {
		return fmt.Errorf("go tool nm: %w", err)
	}
	bss, err := bssRanges(full)
	if err != nil {
		return err
	}
	sizes, total, err := bySymbolModule(nm, mods, bss)
	if err != nil {
		return err
	}
	if bin != "" {
		st, err := os.Stat(bin)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: %d bytes (stripped, as make build links it)\n", bin, st.Size())
	}
	fmt.Fprintf(out, "symbols: %d bytes in %d modules, the standard library and unattributed data\n\n", total, len(mods))
	writeTable(out, sizes, mods, total)
	return nil
}

// modules returns the module paths go version -m lists for bin (its main
// module and every dependency linked), with their versions.
func modules(bin string) (map[string]string, error) {
	b, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		return nil, fmt.Errorf("go version -m: %w", err)
	}
	mods := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && (f[0] == "mod" || f[0] == "dep") {
			v := "(this module)"
			if f[0] == "dep" && len(f) >= 3 {
				v = f[2]
			}
			mods[f[1]] = v
		}
	}
	if len(mods) == 0 {
		return nil, fmt.Errorf("go version -m %s listed no modules", bin)
	}
	return mods, nil
}

// Rows that are not modules.
const (
	stdRow          = "Go standard library and runtime"
	unattributedRow = "unattributed (string data, itabs, linker tables)"
)

// addrRange is a section's addresses, [start, end).
type addrRange struct{ start, end uint64 }

// bssRanges returns the address ranges of bin's zeroed sections (.bss,
// .noptrbss): their symbols take memory, not bytes of the file (the FIPS
// module's 32 MiB DRBG buffer is one).
func bssRanges(bin string) ([]addrRange, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []addrRange
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOBITS {
			out = append(out, addrRange{s.Addr, s.Addr + s.Size})
		}
	}
	return out, nil
}

// bySymbolModule sums go tool nm -size output by module, leaving out the
// symbols at an address in bss.
func bySymbolModule(nm []byte, mods map[string]string, bss []addrRange) (map[string]int64, int64, error) {
	paths := make([]string, 0, len(mods))
	for p := range mods {
		paths = append(paths, p)
	}
	// Longest first, so that k8s.io/apiserver wins over k8s.io/api.
	sort.Slice(paths, func(i, j int) bool { return len(paths[i]) > len(paths[j]) })
	sizes := map[string]int64{}
	var total int64
	sc := bufio.NewScanner(bytes.NewReader(nm))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		// address size type name (the name may hold spaces)
		f := strings.Fields(sc.Text())
		if len(f) < 4 {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return nil, 0, fmt.Errorf("go tool nm line %q: %w", sc.Text(), err)
		}
		addr, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil {
			return nil, 0, fmt.Errorf("go tool nm line %q: %w", sc.Text(), err)
		}
		if f[2] == "U" || inRanges(addr, bss) {
			continue
		}
		total += n
		sizes[moduleOf(strings.Join(f[3:], " "), paths)] += n
	}
	return sizes, total, sc.Err()
}

func inRanges(a uint64, rs []addrRange) bool {
	for _, r := range rs {
		if a >= r.start && a < r.end {
			return true
		}
	}
	return false
}

// moduleOf names the row a symbol counts for.
func moduleOf(sym string, paths []string) string {
	for _, p := range []string{"type:.eq.", "type:.namedata.", "type:", "go:itab.*", "go:itab.", "go:info."} {
		sym = strings.TrimPrefix(sym, p)
	}
	sym = strings.TrimLeft(sym, "*[]")
	for _, p := range paths {
		if strings.HasPrefix(sym, p) && len(sym) > len(p) && (sym[len(p)] == '.' || sym[len(p)] == '/') {
			return p
		}
	}
	// The package path ends at the first dot after its last slash (before
	// any type arguments); the standard library's has no dot in its first
	// element (nor has vendor/, the standard library's own copies).
	head := sym
	if i := strings.IndexAny(head, "[(,"); i >= 0 {
		head = head[:i]
	}
	slash := strings.LastIndex(head, "/")
	if dot := strings.Index(head[slash+1:], "."); dot >= 0 && !strings.Contains(head, ":") {
		first, _, _ := strings.Cut(head[:slash+1+dot], "/")
		if !strings.Contains(first, ".") {
			return stdRow
		}
	}
	return unattributedRow
}

// writeTable writes one row per module linked, largest first, then the
// standard library and the unattributed bytes.
func writeTable(w io.Writer, sizes map[string]int64, mods map[string]string, total int64) {
	names := make([]string, 0, len(mods))
	for m := range mods {
		names = append(names, m)
	}
	sort.Slice(names, func(i, j int) bool {
		if sizes[names[i]] != sizes[names[j]] {
			return sizes[names[i]] > sizes[names[j]]
		}
		return names[i] < names[j]
	})
	fmt.Fprintln(w, "| module | version | symbol bytes | share |")
	fmt.Fprintln(w, "|---|---|---:|---:|")
	for _, m := range names {
		fmt.Fprintf(w, "| `%s` | %s | %s | %s |\n", m, mods[m], thousands(sizes[m]), share(sizes[m], total))
	}
	for _, r := range []string{stdRow, unattributedRow} {
		fmt.Fprintf(w, "| %s | | %s | %s |\n", r, thousands(sizes[r]), share(sizes[r], total))
	}
}

func share(n, total int64) string {
	if total == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(total))
}

// thousands writes n with commas: 1,234,567.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
