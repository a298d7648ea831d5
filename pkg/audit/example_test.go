package audit_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/watch-doctor/watch-doctor/pkg/audit"
)

func ExampleRead() {
	log := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"7e1","stage":"ResponseStarted","requestURI":"/api/v1/namespaces/rand2/pods?sendInitialEvents=true\u0026watch=true","verb":"watch","user":{"username":"slow-informer"},"sourceIPs":["10.244.1.7"],"userAgent":"informer/v1.0","requestReceivedTimestamp":"2026-11-29T10:22:03.338000Z","stageTimestamp":"2026-11-29T10:22:03.339000Z"}
`
	l, err := audit.Read(context.Background(), strings.NewReader(log), "audit.log", audit.DefaultLimits)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range l.Events {
		fmt.Println(e.User, e.Path, e.SourceIPs, e.UserAgent, e.RequestReceived.Format("15:04:05.000"))
	}
	// Output:
	// slow-informer /api/v1/namespaces/rand2/pods [10.244.1.7] informer/v1.0 10:22:03.338
}
