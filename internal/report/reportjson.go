package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// writeReportJSON writes what writeStructured writes for a report, byte for
// byte, without holding the whole document in memory: the findings (tens
// of thousands on a big server) are encoded one at a time.
func writeReportJSON(w io.Writer, r *api.Report) error {
	rest := *r
	rest.Findings = nil
	head, err := json.MarshalIndent(&rest, "", "  ")
	if err != nil {
		return err
	}
	const marker = "\n  \"findings\": null"
	before, after, ok := bytes.Cut(head, []byte(marker))
	if !ok {
		return fmt.Errorf("encoding json: no findings field in the report")
	}
	bw := bufio.NewWriter(w)
	bw.Write(before)
	bw.WriteString(marker[:len(marker)-len("null")])
	if len(r.Findings) == 0 {
		bw.WriteString("[]")
	} else {
		bw.WriteString("[\n")
		// One encoder and one buffer for all findings: MarshalIndent
		// allocates both per finding, which a relist storm (50,000
		// findings, 128 MB) paid for in garbage collection. The bytes are
		// the same (both escape HTML, both indent after the first line);
		// appendIndent indents without json.Indent's validating scan.
		var buf bytes.Buffer
		var out []byte
		enc := json.NewEncoder(&buf)
		for i := range r.Findings {
			buf.Reset()
			if err := enc.Encode(&r.Findings[i]); err != nil {
				return err
			}
			out = appendIndent(append(out[:0], "    "...), bytes.TrimSuffix(buf.Bytes(), []byte("\n")), "    ", "  ")
			bw.Write(out)
			if i < len(r.Findings)-1 {
				bw.WriteByte(',')
			}
			bw.WriteByte('\n')
		}
		bw.WriteString("  ]")
	}
	bw.Write(after)
	bw.WriteByte('\n')
	return bw.Flush()
}
