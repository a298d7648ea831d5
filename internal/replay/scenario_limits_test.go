package replay

import (
	"errors"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/bounded"
)

// scenarioWith is a valid scenario with extra lines in its resource
// (indented 2) and its client (indented 4).
func scenarioWith(resource, client string) string {
	return "name: hostile\nduration: 10m\nresources:\n- name: pods\n  objects:\n  - {count: 10, bytes: 1000}\n" + resource +
		"clients:\n- name: c\n  model: healthy\n" + client
}

func TestScenarioDurationsAreBounded(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"a client timeout of 292 years", scenarioWith("", "  timeout: 9223372036s\n"), `client "c": timeout 2562047h47m16s is more than 720h0m0s`},
		{"a negative timeout", scenarioWith("", "  timeout: -1s\n"), `client "c": timeout -1s must not be negative`},
		{"startAt past the bound", scenarioWith("", "  startAt: 1000h\n"), `client "c": startAt 1000h0m0s is more than 720h0m0s`},
		{"replicas that would start past the bound", scenarioWith("", "  count: 100000\n  every: 1h\n"), `client "c": every 1h0m0s: replica 100000 would start after 720h0m0s`},
		{"a duration past the bound", strings.Replace(scenarioWith("", ""), "duration: 10m", "duration: 1000h\ntick: 1m", 1), `duration 1000h0m0s is more than 720h0m0s`},
		{"a stall timeout past the bound", scenarioWith("", "") + "stallTimeout: 9223372036s\n", `stallTimeout 2562047h47m16s is more than 720h0m0s`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestScenarioUpdateVolumeIsBounded(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"a stream from before time 0", scenarioWith("  updates: [{perSecond: 100000, from: -1000h}]\n", ""), `resource "pods": updates[0].from -1000h0m0s must not be negative`},
		{"a stream until before time 0", scenarioWith("  updates: [{perSecond: 1, until: -1s}]\n", ""), `resource "pods": updates[0].until -1s must not be negative`},
		{"too many updates in all", scenarioWith("  updates: [{perSecond: 100000}]\n", ""), `updates: 60000000 updates in all`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	sc, err := Parse(strings.NewReader(scenarioWith("  updates: [{perSecond: 100, from: 1m, until: 2m}, {perSecond: 2.5, from: 9m, until: 20m}]\n", "")))
	if err != nil {
		t.Fatal(err)
	}
	// 100/s for 60 s, and 2.5/s for the last 60 s of the 10 m.
	if got := sc.UpdateCount(); got != 6000+150 {
		t.Errorf("UpdateCount = %d, want 6150", got)
	}
}

func TestScenarioFileIsBoundedNamingTheBound(t *testing.T) {
	// A description past the file's bound, with the clients after it:
	// once silently cut, dropping the clients.
	huge := "description: " + strings.Repeat("x", MaxBytes) + "\n" + scenarioWith("", "")
	_, err := Parse(strings.NewReader(huge))
	var tl *bounded.TooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "holds more than 16 MiB") {
		t.Errorf("err = %v, want the scenario's bound named", err)
	}
	long := "description: " + strings.Repeat("x", MaxDescriptionBytes+1) + "\n" + scenarioWith("", "")
	if _, err := Parse(strings.NewReader(long)); err == nil || !strings.Contains(err.Error(), "description is 65537 bytes, more than 64 KiB") {
		t.Errorf("err = %v, want the description's bound named", err)
	}
}
