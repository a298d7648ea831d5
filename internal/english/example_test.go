package english_test

import (
	"fmt"

	"github.com/watch-doctor/watch-doctor/internal/english"
)

func Example() {
	for _, n := range []int{0, 1, 3} {
		fmt.Printf("%s; %d client%s\n", english.Count(n, "watch", "watches"), n, english.Plural(n, "", "s"))
	}
	// Output:
	// 0 watches; 0 clients
	// 1 watch; 1 client
	// 3 watches; 3 clients
}
