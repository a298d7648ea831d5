package archtest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// oneSentenceDocs are the documents whose tables hold one sentence per
// cell, at most maxCell characters: the incident card and the reference a
// reader scans mid-incident. Detail goes in prose under the table.
var oneSentenceDocs = []string{"README.md", "docs/analyze.md"}

// maxCell is the longest table cell, in characters.
const maxCell = 300

// sentenceBreak is a full stop, question or exclamation mark followed by
// a new sentence (a capital letter), outside code spans.
var sentenceBreak = regexp.MustCompile(`[.!?] +[A-Z*]`)

// cellProblems lists the table cells of the Markdown text that hold more
// than one sentence or more than maxCell characters, as "line: problem".
func cellProblems(text string) ([]string, error) {
	var out []string
	err := eachProseLine([]byte(text), func(n int, line string) {
		if !strings.HasPrefix(line, "|") {
			return
		}
		cells := strings.Split(strings.ReplaceAll(strings.Trim(line, "|"), `\|`, "/"), "|")
		for i, c := range cells {
			c = strings.TrimSpace(c)
			if l := len([]rune(c)); l > maxCell {
				out = append(out, fmt.Sprintf("%d: cell %d is %d characters, over %d", n, i+1, l, maxCell))
			}
			if sentenceBreak.MatchString(codeSpan.ReplaceAllString(c, "x")) {
				out = append(out, fmt.Sprintf("%d: cell %d holds more than one sentence", n, i+1))
			}
		}
	})
	return out, err
}

// TestTableCells holds the tables of oneSentenceDocs to one sentence per
// cell, at most maxCell characters.
func TestTableCells(t *testing.T) {
	for _, f := range oneSentenceDocs {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		probs, err := cellProblems(string(b))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range probs {
			t.Errorf("%s:%s: write one sentence per cell and the rest as prose under the table", f, p)
		}
		if !bytes.Contains(b, []byte("\n|")) {
			t.Errorf("%s has no table: is it still one of oneSentenceDocs?", f)
		}
	}
}

// TestCellProblemsFindsThem runs the check on a text of its own, so a
// check that accepts everything fails.
func TestCellProblemsFindsThem(t *testing.T) {
	text := "| a | b |\n|---|---|\n| One sentence, e.g. `x. Y` in code. | Two. Sentences. |\n" +
		"| " + strings.Repeat("x", maxCell+1) + " | `a \\| b` is fine |\n```\n| Not. A table. |\n```\n"
	got, err := cellProblems(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"3: cell 2 holds more than one sentence", fmt.Sprintf("4: cell 1 is %d characters, over %d", maxCell+1, maxCell)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cellProblems (-want +got):\n%s", diff)
	}
}
