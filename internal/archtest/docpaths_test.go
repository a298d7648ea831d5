package archtest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A backticked path of the documentation, `internal/report/table.go`,
// `deploy/rbac.yaml`, `docs/analyze.md#findings` or `internal/cli/diagnose.go:130`,
// must name what is in the tree. The rule that tells a repository path from
// any other code span:
//
//   - the span is one word (no space) of path characters, with a slash;
//   - its first element is a top-level entry of the repository (`internal`,
//     `docs`, `deploy`, `test`, `.ci`, ...), and under `pkg/` the second
//     element is one of our packages: upstream Kubernetes has a `pkg/` too
//     (`pkg/storage/cacher/cacher.go`), and `k8s.io/...`, `net/http/...` or
//     a module-cache path never starts with one of our top-level names;
//   - a span with `...` or a placeholder (`NAME`-style capitals after the
//     first element) is a pattern, not a path, and is skipped; one with `*`
//     is a glob and must match something; one under a directory the build
//     writes (a `/dir/` line of .gitignore: `bench/out/`) is skipped;
//   - `internal/report.Escape` (a package and a symbol) needs the package's
//     directory; the symbol is the compiler's to check.
//
// It is resolved from the repository root, and for a document outside the
// root and docs/ (test/e2e/README.md) also from the document's directory.
// A `:N` or `:N-M` suffix must be a line of the file; a `#fragment` of a
// Markdown file one of its headings. CHANGELOG.md is history and names what
// was: it is not checked.
var (
	pathSpan   = regexp.MustCompile("^[A-Za-z0-9._/*-]+(:[0-9]+(-[0-9]+)?)?(#[a-z0-9_-]+)?$")
	symbol     = regexp.MustCompile(`\.[A-Za-z_][A-Za-z0-9_]*$`)
	lineSuffix = regexp.MustCompile(`:([0-9]+)(?:-([0-9]+))?$`)
	capsWord   = regexp.MustCompile(`(^|/)[A-Z][A-Z0-9_]+[A-Z]($|[/.\[-])`)
)

// ourPkgs are the packages under pkg/: a pkg/ path naming another is
// upstream's.
func ourPkgs(root string) (map[string]bool, error) {
	es, err := os.ReadDir(filepath.Join(root, "pkg"))
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, e := range es {
		out[e.Name()] = true
	}
	return out, nil
}

// builtDirs are the directories the build and the tools write, from the
// `/dir/` lines of root's .gitignore, as `dir/`.
func builtDirs(root string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "/") && strings.HasSuffix(l, "/") {
			out = append(out, strings.TrimPrefix(l, "/"))
		}
	}
	return out, nil
}

// isRepoPath says whether the code span s names a path of the repository
// whose top-level entries are top (see the rule above).
func isRepoPath(s string, top, pkgs map[string]bool) bool {
	if !strings.Contains(s, "/") || !pathSpan.MatchString(s) || strings.Contains(s, "...") || strings.HasPrefix(s, "/") {
		return false
	}
	parts := strings.Split(s, "/")
	if !top[parts[0]] || parts[0] == "pkg" && (len(parts) < 2 || !pkgs[strings.SplitN(parts[1], "#", 2)[0]]) {
		return false
	}
	rest := strings.Join(parts[1:], "/")
	return !capsWord.MatchString(rest)
}

// checkPath checks the repository path s, named in the document doc (its
// path relative to root).
func checkPath(root, doc, s string, anchors map[string]map[string]bool) error {
	s, frag, _ := strings.Cut(s, "#")
	var lines int
	if m := lineSuffix.FindStringSubmatch(s); m != nil {
		s = strings.TrimSuffix(s, m[0])
		last := m[1]
		if m[2] != "" {
			last = m[2]
		}
		lines, _ = strconv.Atoi(last)
	}
	bases := []string{root}
	if dir := filepath.Dir(doc); dir != "." && dir != "docs" && !strings.HasPrefix(dir, "docs"+string(filepath.Separator)) {
		bases = append(bases, filepath.Join(root, dir))
	}
	var found string
	for _, b := range bases {
		p := filepath.Join(b, filepath.FromSlash(s))
		if strings.Contains(s, "*") {
			if m, _ := filepath.Glob(p); len(m) > 0 {
				return nil
			}
			continue
		}
		if _, err := os.Stat(p); err == nil {
			found = p
			break
		}
	}
	if found == "" && symbol.MatchString(s) && !strings.Contains(s, "*") {
		if fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(symbol.ReplaceAllString(s, "")))); err == nil && fi.IsDir() {
			return nil
		}
	}
	if found == "" {
		return fmt.Errorf("no such file or directory in the repository")
	}
	if lines > 0 {
		b, err := os.ReadFile(found)
		if err != nil {
			return fmt.Errorf("line %d: %v", lines, err)
		}
		if n := bytes.Count(b, []byte("\n")); n < lines {
			return fmt.Errorf("has %d lines, not %d", n, lines)
		}
	}
	if frag != "" {
		return checkLink(found, link{target: "#" + frag}, anchors)
	}
	return nil
}

// readmeRef is a prose reference to a section of the README: `README
// "Exit codes"`, `README's "Exit codes"`, `the repository README,
// "Exit codes"`. Any other mention of the README in prose (outside code
// spans and links; README.md as a file name aside) fails: "see the README"
// sends a reader mid-incident to a 14 KB page with no place to look.
var (
	readmeWord = regexp.MustCompile(`\bREADME\b(\.md)?`)
	readmeRef  = regexp.MustCompile(`\bREADME(?:'s)?,? "([^"]+)"`)
)

// span is a code span or a prose README mention of a document, with its line.
type span struct {
	text string
	line int
}

// scanDoc reads the code spans and the prose mentions of the README (the
// text from the word on) of a Markdown file, outside fenced code blocks.
func scanDoc(path string) (codes, readmes []span, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	err = eachProseLine(b, func(n int, line string) {
		for _, m := range codeSpan.FindAllString(line, -1) {
			codes = append(codes, span{strings.Trim(m, "`"), n})
		}
		prose := codeSpan.ReplaceAllString(line, "")
		prose = regexp.MustCompile(`\[[^\]]*\]\([^)]*\)`).ReplaceAllString(prose, "")
		for _, loc := range readmeWord.FindAllStringSubmatchIndex(prose, -1) {
			if loc[2] >= 0 { // README.md, the file
				continue
			}
			readmes = append(readmes, span{prose[loc[0]:], n})
		}
	})
	return codes, readmes, err
}

// checkReadmeRef checks a prose mention of the README (the text from the
// word on) against the README's headings.
func checkReadmeRef(text string, headings map[string]bool) error {
	m := readmeRef.FindStringSubmatch(text)
	if m == nil {
		return fmt.Errorf("names no section: write README \"Heading\" or link ../README.md#anchor")
	}
	if !headings[anchor(m[1])] {
		return fmt.Errorf("the README has no section %q", m[1])
	}
	return nil
}

// TestDocPaths checks every backticked repository path and every prose
// reference to a README section of the documentation (the rules above).
func TestDocPaths(t *testing.T) {
	top := map[string]bool{}
	es, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.Name() != ".git" {
			top[e.Name()] = true
		}
	}
	pkgs, err := ourPkgs(root)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := parseDoc(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	built, err := builtDirs(root)
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{}
	paths, refs := 0, 0
	for _, f := range docFiles(t) {
		if f == "CHANGELOG.md" {
			continue
		}
		codes, readmes, err := scanDoc(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range codes {
			if !isRepoPath(c.text, top, pkgs) || slices.ContainsFunc(built, func(d string) bool { return strings.HasPrefix(c.text, d) }) {
				continue
			}
			paths++
			if err := checkPath(root, f, c.text, anchors); err != nil {
				t.Errorf("%s:%d: `%s`: %v", f, c.line, c.text, err)
			}
		}
		if f == "README.md" {
			continue
		}
		for _, r := range readmes {
			refs++
			if err := checkReadmeRef(r.text, readme.anchors); err != nil {
				t.Errorf("%s:%d: %q: %v", f, r.line, r.text, err)
			}
		}
	}
	if paths < 100 {
		t.Errorf("checked %d backticked paths, want the documentation's", paths)
	}
	t.Logf("checked %d backticked paths and %d README references", paths, refs)
}

// TestDocPathsFailOnStalePaths runs the checks on a tree and a page of
// their own, so a checker that accepts everything fails.
func TestDocPathsFailOnStalePaths(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"README.md":                  "# Title\n\n## Exit codes\n",
		"internal/report/table.go":   "package report\n\nfunc f() {}\n",
		"docs/page.md":               "# Page\n\n## A section\n",
		"pkg/api/doc.go":             "package api\n",
		"deploy/prometheus/a.yaml":   "a: 1\n",
		"test/e2e/cmd/probe/main.go": "package main\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	page := "docs/check.md"
	text := "# Check\n\n" +
		"`internal/report/table.go` `internal/report/table.go:3` `internal/report/table.go:4` `internal/report/metrics.go`\n" +
		"`docs/page.md#a-section` `docs/page.md#gone` `deploy/prometheus/*.yaml` `deploy/*.json` `internal/report/`\n" +
		"`pkg/api/doc.go` `internal/report.Escape` `internal/poll.runtime_pollWait` `pkg/storage/cacher/cacher.go` `k8s.io/apiserver/pkg/x.go` `internal/cli/NAME.go` `--flag x/y` `go test ./...`\n" +
		"See the README's \"Exit codes\"; README \"Gone\" and see the README. bench/README.md is a file; `the README` is code, [the README](../README.md) a link.\n" +
		"```\n`internal/fenced.go`\n```\n"
	if err := os.WriteFile(filepath.Join(dir, page), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	top := map[string]bool{"internal": true, "docs": true, "pkg": true, "deploy": true, "test": true, "README.md": true}
	pkgs := map[string]bool{"api": true}
	codes, readmes, err := scanDoc(filepath.Join(dir, page))
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, c := range codes {
		if isRepoPath(c.text, top, pkgs) && checkPath(dir, page, c.text, map[string]map[string]bool{}) != nil {
			bad = append(bad, c.text)
		}
	}
	readme, err := parseDoc(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range readmes {
		if checkReadmeRef(r.text, readme.anchors) != nil {
			bad = append(bad, r.text)
		}
	}
	want := []string{
		"internal/report/table.go:4", "internal/report/metrics.go", "docs/page.md#gone", "deploy/*.json", "internal/poll.runtime_pollWait",
		`README "Gone" and see the README. bench/README.md is a file;  is code,  a link.`,
		"README. bench/README.md is a file;  is code,  a link.",
	}
	if diff := cmp.Diff(want, bad); diff != "" {
		t.Errorf("stale paths and references (-want +got):\n%s", diff)
	}
	// From a document outside docs/, a path may be relative to it.
	if err := checkPath(dir, "test/e2e/README.md", "cmd/probe/main.go", nil); err != nil {
		t.Errorf("a path relative to test/e2e/README.md: %v", err)
	}
}
