package report

import "strings"

// groupAtLeast is the fewest identical rows merged into one: two or three
// alike read well as rows, a relist storm does not.
const groupAtLeast = 5

// groupRows merges each set of at least groupAtLeast identical rows into
// one, where the first of them was, and counts the rows of each returned
// row, as panicparse's buckets merge goroutines with identical stacks:
// 50,000 watches initializing at once after an API server restart read as
// one row. counts is nil when nothing was merged, so a table without a
// storm is printed as it always was.
func groupRows(rows [][]string) (grouped [][]string, counts []int) {
	keys := make([]string, len(rows))
	seen := make(map[string]int, len(rows))
	merge := false
	for i, row := range rows {
		keys[i] = strings.Join(row, "\x00")
		seen[keys[i]]++
		merge = merge || seen[keys[i]] >= groupAtLeast
	}
	if !merge {
		return rows, nil
	}
	at := map[string]int{}
	for i, row := range rows {
		k := keys[i]
		if n := seen[k]; n < groupAtLeast {
			grouped, counts = append(grouped, row), append(counts, 1)
			continue
		}
		if _, done := at[k]; !done {
			at[k] = len(grouped)
			grouped, counts = append(grouped, row), append(counts, seen[k])
		}
	}
	return grouped, counts
}
