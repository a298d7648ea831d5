package archtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// root is the repository, from this package's directory.
var root = filepath.Join("..", "..")

// docFiles are the Markdown files whose links must resolve: the README,
// the changelog, everything under docs/ and the other READMEs of the tree.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "CHANGELOG.md", "bench/README.md", "test/e2e/README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".md" {
			return err
		}
		rel, err := filepath.Rel(root, path)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestDocLinks checks every relative link of the documentation: the file
// or directory it names exists, and its #fragment, if any, is a heading of
// that Markdown file (GitHub's anchors). A page that moved or a heading
// renamed fails here, not in a reader's browser.
func TestDocLinks(t *testing.T) {
	files := docFiles(t)
	if len(files) < 8 {
		t.Fatalf("found %d documentation files, want the README and docs/", len(files))
	}
	anchors := map[string]map[string]bool{}
	checked := 0
	for _, f := range files {
		doc, err := parseDoc(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range doc.links {
			checked++
			if err := checkLink(filepath.Join(root, f), l, anchors); err != nil {
				t.Errorf("%s:%d: link %q: %v", f, l.line, l.target, err)
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked %d links, want the documentation's", checked)
	}
}

// checkLink checks a link of the Markdown file at path from (on disk).
func checkLink(from string, l link, anchors map[string]map[string]bool) error {
	path, frag, _ := strings.Cut(l.target, "#")
	target := from
	if path != "" {
		target = filepath.Join(filepath.Dir(from), filepath.FromSlash(path))
	}
	fi, err := os.Stat(target)
	if err != nil {
		return fmt.Errorf("no such file or directory")
	}
	if frag == "" {
		return nil
	}
	if fi.IsDir() || filepath.Ext(target) != ".md" {
		return fmt.Errorf("a #fragment on what is not a Markdown file")
	}
	if anchors[target] == nil {
		doc, err := parseDoc(target)
		if err != nil {
			return err
		}
		anchors[target] = doc.anchors
	}
	if !anchors[target][frag] {
		return fmt.Errorf("no heading with anchor #%s", frag)
	}
	return nil
}

type link struct {
	target string
	line   int
}

type doc struct {
	links   []link
	anchors map[string]bool
}

var (
	inlineLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	refLink    = regexp.MustCompile(`^\[[^\]]+\]:\s*(\S+)`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
	external   = regexp.MustCompile(`^[a-z][a-z0-9+.-]*:`)
)

// parseDoc reads the relative links and the heading anchors of a Markdown
// file, outside fenced code blocks.
func parseDoc(path string) (doc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return doc{}, err
	}
	d := doc{anchors: map[string]bool{}}
	seen := map[string]int{}
	err = eachProseLine(b, func(n int, line string) {
		if h, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
			a := anchor(h)
			if k := seen[a]; k > 0 {
				d.anchors[fmt.Sprintf("%s-%d", a, k)] = true
			} else {
				d.anchors[a] = true
			}
			seen[a]++
		}
		text := codeSpan.ReplaceAllString(line, "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
			targets = append(targets, m[1])
		}
		if m := refLink.FindStringSubmatch(text); m != nil {
			targets = append(targets, m[1])
		}
		for _, tg := range targets {
			if !external.MatchString(tg) {
				d.links = append(d.links, link{tg, n})
			}
		}
	})
	return d, err
}

// eachProseLine calls fn with each line of the Markdown text b outside
// fenced code blocks, and its number.
func eachProseLine(b []byte, fn func(n int, line string)) error {
	fenced := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			fn(n, line)
		}
	}
	return sc.Err()
}

// anchor is GitHub's anchor of a heading: its text without code marks and
// link targets, lowercased, with everything but letters, digits, spaces,
// hyphens and underscores dropped, and spaces turned into hyphens.
func anchor(heading string) string {
	heading = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"The complete fix on HTTP/1.1, measured":              "the-complete-fix-on-http11-measured",
		"replay: what would the stall timeout have done?":     "replay-what-would-the-stall-timeout-have-done",
		"Client stacks: measured, not assumed":                "client-stacks-measured-not-assumed",
		"Continuous detection (serve)":                        "continuous-detection-serve",
		"`kubectl watch-doctor` and [its docs](docs/x.md)":    "kubectl-watch-doctor-and-its-docs",
		"Attribution: which client holds each watch":          "attribution-which-client-holds-each-watch",
		"diagnose and collect: reading a live cluster":        "diagnose-and-collect-reading-a-live-cluster",
		"Found on a long observation: the wire size is ...":   "found-on-a-long-observation-the-wire-size-is-",
		"Output formats and the JSON/YAML contract":           "output-formats-and-the-jsonyaml-contract",
		"  Production scale  ":                                "production-scale",
		"What the replay answered: does the patch leave a...": "what-the-replay-answered-does-the-patch-leave-a",
	} {
		if got := anchor(heading); got != want {
			t.Errorf("anchor(%q) = %q, want %q", heading, got, want)
		}
	}
}

// TestDocLinksFailOnBrokenLinks runs the checker on a file of its own, so a
// checker that accepts everything fails.
func TestDocLinksFailOnBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "page.md")
	text := "# Title\n\n## A section\n\n[ok](page.md#a-section) [ok](#title) [gone](missing.md)\n" +
		"[bad anchor](page.md#nowhere) [web](https://example.com/x) `[code](missing.md)`\n\n```\n[fenced](missing.md)\n```\n"
	if err := os.WriteFile(page, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := parseDoc(page)
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, l := range d.links {
		if checkLink(page, l, map[string]map[string]bool{}) != nil {
			bad = append(bad, l.target)
		}
	}
	if diff := cmp.Diff([]string{"missing.md", "page.md#nowhere"}, bad); diff != "" {
		t.Errorf("broken links (-want +got):\n%s", diff)
	}
}

// TestREADMEIsTheIncidentCard holds the README to what it promises: the two
// set-up commands first, at most 12 KB (12,000 bytes, issue 36), and the
// demo's output as make demo prints it, uncut (the golden of `analyze t1 t2`).
func TestREADMEIsTheIncidentCard(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if n := len(b); n > 12000 || n < 9000 {
		t.Errorf("README.md is %d bytes, want 9,000 to 12,000: move the mechanism to docs/", n)
	}
	setup := "```sh\nmake demo    # analyze a real kube-apiserver capture shipped in testdata: no cluster, no network\n" +
		"make test    # vet, gofmt, go mod tidy check, unit tests with -race, the replay's differential suite\n```\n"
	if i := strings.Index(readme, "```"); i < 0 || !strings.HasPrefix(readme[i:], setup) || strings.Count(readme[:i], "\n") > 3 {
		t.Errorf("README.md does not open with the two set-up commands:\n%s", setup)
	}
	demo, err := os.ReadFile(filepath.Join(root, "internal", "cli", "testdata", "golden", "analyze-t1-t2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	const intro = "This is what `make demo` prints"
	i := strings.Index(readme, intro)
	if i < 0 {
		t.Fatalf("README.md has no %q", intro)
	}
	rest := readme[i:]
	start := strings.Index(rest, "```\n")
	if start < 0 {
		t.Fatal("no code block after the demo's introduction")
	}
	block := rest[start+4:]
	end := strings.Index(block, "```\n")
	if end < 0 {
		t.Fatal("the demo's code block does not end")
	}
	// The golden runs from internal/cli; make demo from the root.
	want := strings.ReplaceAll(string(demo), "../../testdata/", "testdata/")
	if diff := cmp.Diff(want, block[:end]); diff != "" {
		t.Errorf("README.md's demo is not what make demo prints (-want +got):\n%s", diff)
	}
}
