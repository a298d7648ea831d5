package apf_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/watch-doctor/watch-doctor/pkg/apf"
)

// The dump_requests?includeRequestDetails=1 of the t2 capture, and a
// request waiting in a queue.
const exampleRequests = `PriorityLevelName, FlowSchemaName,   QueueIndex, RequestIndexInQueue, FlowDistingsher, ArriveTime,                     InitialSeats, FinalSeats, AdditionalLatency, StartTime,                      UserName,      Verb,   APIPath,                                        Namespace, Name,   APIVersion, Resource,    SubResource
exempt,            exempt,           -1,         -1,                  ,                2026-11-29T10:24:33.564290502Z, 1,            0,          0s,                2026-11-29T10:24:33.564290502Z, admin,         get,    /debug/api_priority_and_fairness/dump_requests, ,          ,       ,           ,            
global-default,    global-default,   111,        -1,                  slow-informer,   2026-11-29T10:22:03.339182246Z, 1,            0,          0s,                2026-11-29T10:22:03.339215169Z, slow-informer, watch,  /api/v1/namespaces/rand2/pods,                  rand2,     ,       v1,         pods,        
global-default,    global-default,   123,        -1,                  paced-reader,    2026-11-29T10:22:03.308778137Z, 1,            0,          0s,                2026-11-29T10:22:03.308909537Z, paced-reader,  watch,  /api/v1/namespaces/rand2/pods,                  rand2,     ,       v1,         pods,        
workload-low,      service-accounts, 7,          0,                   ci-bot,          2026-11-29T10:24:30.000000000Z, 8,            0,          0s,                0001-01-01T00:00:00Z,           ci-bot,        list,   /apis/apps/v1/deployments,                      ,          ,       apps/v1,    deployments, 
`

func ExampleParseRequests() {
	rs, err := apf.ParseRequests(strings.NewReader(exampleRequests))
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rs.Requests {
		if r.Executing() && r.Verb == "watch" {
			fmt.Printf("%s watches %s in %s with %d seat(s) since %s\n", r.User, r.Path, r.PriorityLevel, r.Seats(), r.StartTime.Format("15:04:05"))
		}
	}
	fmt.Printf("%d requests, %d skipped\n", len(rs.Requests), len(rs.Skipped))
	// Output:
	// slow-informer watches /api/v1/namespaces/rand2/pods in global-default with 1 seat(s) since 10:22:03
	// paced-reader watches /api/v1/namespaces/rand2/pods in global-default with 1 seat(s) since 10:22:03
	// 4 requests, 0 skipped
}

func ExampleParsePriorityLevels() {
	const dump = `PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests, DispatchedRequests, RejectedRequests, TimedoutRequests, CancelledRequests
exempt,            0,            false,  false,       0,               1,                 2571,               0,                0,                0
global-default,    0,            false,  false,       0,               2,                 3,                  0,                0,                0
`
	levels, _, err := apf.ParsePriorityLevels(strings.NewReader(dump))
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range levels {
		fmt.Printf("%s: %d executing, %d waiting\n", l.Name, l.ExecutingRequests, l.WaitingRequests)
	}
	// Output:
	// exempt: 1 executing, 0 waiting
	// global-default: 2 executing, 0 waiting
}
