package metrics

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"
)

func TestAPIServerCurrent(t *testing.T) {
	first, second, only := &Snapshot{Source: "first"}, &Snapshot{Source: "second"}, &Snapshot{Source: "only"}
	for _, tc := range []struct {
		name string
		a    APIServer
		want *Snapshot
	}{
		{"one sample", APIServer{Snapshot: only}, only},
		{"rates: the second sample", APIServer{Snapshot: only, Rates: &RateSnapshot{First: first, Second: second}}, second},
		{"rates without a second", APIServer{Snapshot: only, Rates: &RateSnapshot{First: first}}, only},
		{"failed", APIServer{Err: errors.New("refused")}, nil},
	} {
		if got := tc.a.Current(); got != tc.want {
			t.Errorf("%s: Current() = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestUnknownRates: every rate of the row is unknown, none left at 0.
func TestUnknownRates(t *testing.T) {
	v := reflect.ValueOf(UnknownRates())
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Float64 && !math.IsNaN(f.Float()) {
			t.Errorf("%s = %v, want NaN", v.Type().Field(i).Name, f.Float())
		}
	}
}

func TestUnixTime(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want time.Time
	}{
		{1.7644117895e9, time.Unix(1764411789, 500000000)},
		{1, time.Unix(1, 0)},
		{0, time.Time{}},
		{-5, time.Time{}},
		{math.NaN(), time.Time{}},
		{math.Inf(1), time.Time{}},
		{2e11, time.Time{}},
	} {
		if got := UnixTime(tc.v); !got.Equal(tc.want) {
			t.Errorf("UnixTime(%v) = %v, want %v", tc.v, got, tc.want)
		}
	}
}
