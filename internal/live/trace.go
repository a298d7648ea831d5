package live

// TraceResult is the execution trace of one instance.
type TraceResult struct {
	Bytes int64
}

// traceBytes is every byte the instance's traces returned.
func (ir *InstanceResult) traceBytes() int64 {
	if ir.Trace == nil {
		return 0
	}
	return ir.Trace.Bytes
}
