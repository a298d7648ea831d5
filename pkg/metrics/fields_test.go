package metrics

import "testing"

// TestEveryCatalogMetricHasOneField: the catalog and the field table name
// the same metrics, and each field lands in exactly one part of the model
// (process, priority level, or resource).
func TestEveryCatalogMetricHasOneField(t *testing.T) {
	inCatalog := map[MetricID]bool{}
	for _, m := range catalog {
		inCatalog[m.ID] = true
		if _, ok := fields[m.ID]; !ok {
			t.Errorf("catalog metric %s has no field: its values land nowhere", m.ID)
		}
	}
	for id, f := range fields {
		if !inCatalog[id] {
			t.Errorf("field %s is not in the catalog", id)
		}
		parts := 0
		for _, set := range []bool{f.process != nil, f.level != nil, f.value != nil || f.sum != nil} {
			if set {
				parts++
			}
		}
		if parts != 1 {
			t.Errorf("field %s lands in %d parts of the model, want 1", id, parts)
		}
		if f.flowSchema != nil && f.level == nil {
			t.Errorf("field %s has a flow schema value but no level value", id)
		}
	}
}

func TestFieldResourceValues(t *testing.T) {
	var r Resource
	got := fields[WatchListDuration].resourceValues(&r)
	if len(got) != 2 || got[0] != &r.WatchLists || got[1] != &r.WatchListSeconds {
		t.Errorf("watch list duration sets %v, want the count then the sum", got)
	}
	if got := fields[Watchers].resourceValues(&r); len(got) != 1 || got[0] != &r.Watchers {
		t.Errorf("watchers sets %v, want &r.Watchers", got)
	}
	if got := fields[Goroutines].resourceValues(&r); len(got) != 0 {
		t.Errorf("a process metric sets %d resource values", len(got))
	}
}
