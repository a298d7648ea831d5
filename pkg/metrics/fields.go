package metrics

// field is where one catalog metric lands in the watch model. The
// extractor (add), the zero filling (fill) and nothing else read it: a
// metric is mapped to the model in this one table.
type field struct {
	// process is the Snapshot value of a process-wide metric.
	process func(*Snapshot) *float64
	// level and flowSchema are the values of a priority-level metric
	// (flowSchema nil: the metric is per level only).
	level      func(*PriorityLevel) *float64
	flowSchema func(*FlowSchemaLoad) *float64
	// value and sum are the Resource values of a per-resource metric:
	// value takes a counter's or gauge's value (a histogram's count, or its
	// sum when valueIsSum), sum a histogram's sum.
	value      func(*Resource) *float64
	valueIsSum bool
	sum        func(*Resource) *float64
	// cacheOnly: the metric covers only the resources served from the
	// watch cache (the others cover every resource).
	cacheOnly bool
	// keepAbsent: no series reads as absent, never 0. The others (counters,
	// and gauges whose children are created on first use) read as 0 where
	// they cover a row but have no series for it.
	keepAbsent bool
}

var fields = map[MetricID]field{
	Goroutines:       {process: func(s *Snapshot) *float64 { return &s.Goroutines }},
	ResidentMemory:   {process: func(s *Snapshot) *float64 { return &s.ResidentMemoryBytes }},
	ProcessStartTime: {process: func(s *Snapshot) *float64 { return &s.ProcessStartTime }},

	LimitSeats: {level: func(p *PriorityLevel) *float64 { return &p.LimitSeats }, keepAbsent: true},
	ExecutingSeats: {
		level:      func(p *PriorityLevel) *float64 { return &p.ExecutingSeats },
		flowSchema: func(f *FlowSchemaLoad) *float64 { return &f.ExecutingSeats },
	},
	ExecutingRequests: {
		level:      func(p *PriorityLevel) *float64 { return &p.ExecutingRequests },
		flowSchema: func(f *FlowSchemaLoad) *float64 { return &f.ExecutingRequests },
	},

	Watchers:              {value: func(r *Resource) *float64 { return &r.Watchers }},
	RegisteredWatchers:    {value: func(r *Resource) *float64 { return &r.RegisteredWatchers }, keepAbsent: true},
	InitEvents:            {value: func(r *Resource) *float64 { return &r.InitEvents }, cacheOnly: true},
	TerminatedWatchers:    {value: func(r *Resource) *float64 { return &r.TerminatedWatchers }, cacheOnly: true},
	WatchEvents:           {value: func(r *Resource) *float64 { return &r.WatchEvents }},
	WatchEventSizes:       {value: func(r *Resource) *float64 { return &r.WatchEventBytes }, valueIsSum: true},
	CacheEventsReceived:   {value: func(r *Resource) *float64 { return &r.EventsReceived }, cacheOnly: true},
	CacheEventsDispatched: {value: func(r *Resource) *float64 { return &r.EventsDispatched }, cacheOnly: true},
	CacheResourceVersion:  {value: func(r *Resource) *float64 { return &r.CacheResourceVersion }, cacheOnly: true, keepAbsent: true},
	CacheInitializations:  {value: func(r *Resource) *float64 { return &r.CacheInitializations }, cacheOnly: true},
	CacheCapacity:         {value: func(r *Resource) *float64 { return &r.CacheCapacity }, cacheOnly: true, keepAbsent: true},
	WatchListDuration: {
		value: func(r *Resource) *float64 { return &r.WatchLists },
		sum:   func(r *Resource) *float64 { return &r.WatchListSeconds },
	},
}

// resourceValues are the values of r the field sets.
func (f field) resourceValues(r *Resource) []*float64 {
	var out []*float64
	if f.value != nil {
		out = append(out, f.value(r))
	}
	if f.sum != nil {
		out = append(out, f.sum(r))
	}
	return out
}
