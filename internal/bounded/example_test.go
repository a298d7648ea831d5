package bounded_test

import (
	"fmt"
	"strings"

	"github.com/watch-doctor/watch-doctor/internal/bounded"
)

func Example() {
	_, err := bounded.ReadAll(strings.NewReader("0123456789"), 8, "scenario.yaml", "a scenario")
	fmt.Println(err)
	// Output:
	// scenario.yaml holds more than 8 B, the most a scenario may hold
}
