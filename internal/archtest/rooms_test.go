package archtest

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// roomsSection is the section of docs/architecture.md that maps the files
// of internal/live's rooms, one table per room.
const roomsSection = "## The rooms of internal/live"

// fileRow is a row of a file map: its first cell a backticked Go file.
var fileRow = regexp.MustCompile("^\\| `([^`]+\\.go)` \\|")

// roomFiles reads the file maps of the rooms section of an architecture
// page: the Go files its tables name, by directory.
func roomFiles(page string) map[string][]string {
	got := map[string][]string{}
	in := false
	for _, line := range strings.Split(page, "\n") {
		switch {
		case line == roomsSection:
			in = true
		case in && strings.HasPrefix(line, "## "):
			return got
		case in:
			if m := fileRow.FindStringSubmatch(line); m != nil {
				got[path.Dir(m[1])] = append(got[path.Dir(m[1])], path.Base(m[1]))
			}
		}
	}
	return got
}

// byDir groups the files under dir of sourceFiles' list by directory,
// doc.go aside (it holds no code).
func byDir(files []string, dir string) map[string][]string {
	got := map[string][]string{}
	for _, f := range files {
		if strings.HasPrefix(f, dir+"/") && path.Base(f) != "doc.go" {
			got[path.Dir(f)] = append(got[path.Dir(f)], path.Base(f))
		}
	}
	return got
}

// TestRoomsFileMaps fails when a file of internal/live or of one of its
// rooms is missing from the room's file map in docs/architecture.md, or
// the map names a file that is gone: a newcomer reads the map to find
// where a thing is done, so it holds every file (issue 36).
func TestRoomsFileMaps(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	mapped := roomFiles(string(b))
	files, err := sourceFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	onDisk := byDir(files, "internal/live")
	for _, m := range []map[string][]string{mapped, onDisk} {
		for _, files := range m {
			sort.Strings(files)
		}
	}
	if len(onDisk) < 5 {
		t.Fatalf("internal/live holds %d packages, want the top and its four rooms: %v", len(onDisk), onDisk)
	}
	if diff := cmp.Diff(onDisk, mapped); diff != "" {
		t.Errorf("the file maps of %q in docs/architecture.md (-on disk +mapped):\n%s", roomsSection, diff)
	}
}

// TestRoomFilesReadsTheSectionOnly: rows of the rooms section are read by
// directory; a row before or after the section, or one naming no Go file,
// is not.
func TestRoomFilesReadsTheSectionOnly(t *testing.T) {
	page := "## Before\n\n| `internal/x/a.go` | x |\n\n" + roomsSection + "\n\n### a room\n\n| file | owns |\n|---|---|\n" +
		"| `internal/live/run.go` | Run |\n| `internal/live/model/config.go` | Config |\n| `internal/live/model/client.go` | Client |\n| `docs/x.md` | no |\n\n" +
		"## After\n\n| `internal/live/after.go` | x |\n"
	want := map[string][]string{"internal/live": {"run.go"}, "internal/live/model": {"config.go", "client.go"}}
	if diff := cmp.Diff(want, roomFiles(page)); diff != "" {
		t.Errorf("roomFiles (-want +got):\n%s", diff)
	}
}
