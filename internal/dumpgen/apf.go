package dumpgen

import (
	"bufio"
	"fmt"
	"io"
	"time"
)

// WriteAPFRequests writes a dump_requests table with details (the columns
// of upstream's apf_controller_debug.go) holding n executing pod watches,
// one user each (client-0, client-1, ...), the oldest started at first and
// one a millisecond apart: the APF side of n watches planted by Write, as
// a relist storm leaves them (nothing in the dumps tells them apart).
func WriteAPFRequests(w io.Writer, n int, first time.Time) error {
	return WriteAPFRequestsEvery(w, n, first, time.Millisecond)
}

// WriteAPFRequestsEvery is WriteAPFRequests with the requests step apart;
// a step of 0 starts them all at the same instant, so nothing orders
// them.
func WriteAPFRequestsEvery(w io.Writer, n int, first time.Time, step time.Duration) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "PriorityLevelName, FlowSchemaName, QueueIndex, RequestIndexInQueue, FlowDistingsher, ArriveTime, InitialSeats, FinalSeats, AdditionalLatency, StartTime, UserName, Verb, APIPath, Namespace, Name, APIVersion, Resource, SubResource")
	for i := range n {
		t := first.Add(time.Duration(i) * step).Format(time.RFC3339Nano)
		user := fmt.Sprintf("client-%d", i)
		fmt.Fprintf(bw, "global-default, global-default, %d, -1, %s, %s, 1, 0, 0s, %s, %s, watch, /api/v1/namespaces/ns-%d/pods, ns-%d, , v1, pods, \n", i%128, user, t, t, user, i, i)
	}
	return bw.Flush()
}
