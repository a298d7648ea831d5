package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestParseModel: every client model reads back as it prints, and a bad
// one is refused saying what is allowed.

func TestParseModel(t *testing.T) {
	tests := []struct {
		in      string
		want    Model
		wantErr string
	}{
		{in: "healthy", want: Model{Kind: ModelHealthy}},
		{in: "paced 2.5/s", want: Model{Kind: ModelPaced, Rate: 2.5}},
		{in: "stops-after 1", want: Model{Kind: ModelStopsAfter, Events: 1}},
		{in: "stops-after initial-events", want: Model{Kind: ModelStopsAfter, AfterInitialEvents: true}},
		{in: "disconnects-after 2m", want: Model{Kind: ModelDisconnectsAfter, After: 2 * time.Minute}},
		{in: "", wantErr: "empty model"},
		{in: "healthy now", wantErr: "healthy takes no argument"},
		{in: "paced 0/s", wantErr: "positive number"},
		{in: "paced 3", wantErr: `invalid model "paced 3"`},
		{in: "stops-after -1", wantErr: "N must be"},
		{in: "disconnects-after never", wantErr: "T must be"},
		{in: "sleepy", wantErr: `unsupported model "sleepy"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseModel(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if again, _ := ParseModel(got.String()); again != got {
				t.Errorf("String() %q does not parse back", got.String())
			}
		})
	}
}
