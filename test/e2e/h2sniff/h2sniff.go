// Package h2sniff tells whether an HTTP/2 client was told that its stream
// ended, without the client reading its response body: it watches the frames
// the server sends on the client's connection (after TLS, before the
// transport parses them) and records when a stream ended (RST_STREAM, or a
// DATA/HEADERS frame with END_STREAM) and when the connection got GOAWAY.
//
// client-go's watch decoder reads the body only when its consumer reads the
// watch, so a client that stopped reading never learns of a reset at the
// watch.Interface level; its transport does (the read loop keeps reading
// frames: RST_STREAM is not flow-controlled).
package h2sniff

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"k8s.io/client-go/rest"
)

// Frame types and flags of RFC 9113 section 6.
const (
	frameData      = 0x0
	frameHeaders   = 0x1
	frameRSTStream = 0x3
	frameGoAway    = 0x7
	flagEndStream  = 0x1
	frameHeaderLen = 9
)

// End is how and when one stream ended, as the client's transport saw it.
type End struct {
	StreamID uint32
	// Reset is true for RST_STREAM (Code is its error code), false for a
	// clean END_STREAM.
	Reset bool
	Code  http2.ErrCode
	At    time.Time
}

func (e End) String() string {
	if e.Reset {
		return fmt.Sprintf("stream %d reset by the server (%v) at %s", e.StreamID, e.Code, e.At.Format(time.TimeOnly+".000"))
	}
	return fmt.Sprintf("stream %d ended by the server (END_STREAM) at %s", e.StreamID, e.At.Format(time.TimeOnly+".000"))
}

// Recorder collects the stream ends seen on the connections of one client.
//
// Thread safety: all methods may be called from any goroutine.
type Recorder struct {
	now func() time.Time

	mu     sync.Mutex
	ends   []End     // guarded by mu
	goAway time.Time // first GOAWAY; guarded by mu
}

// Ends returns the stream ends seen so far, in order.
func (r *Recorder) Ends() []End {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]End(nil), r.ends...)
}

// GoAway returns when the server first sent GOAWAY (zero if never).
func (r *Recorder) GoAway() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.goAway
}

func (r *Recorder) frame(typ, flags byte, stream uint32, payload []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case typ == frameRSTStream && stream != 0:
		var code http2.ErrCode
		if len(payload) >= 4 {
			code = http2.ErrCode(binary.BigEndian.Uint32(payload))
		}
		r.ends = append(r.ends, End{StreamID: stream, Reset: true, Code: code, At: r.now()})
	case (typ == frameData || typ == frameHeaders) && flags&flagEndStream != 0 && stream != 0:
		r.ends = append(r.ends, End{StreamID: stream, At: r.now()})
	case typ == frameGoAway && r.goAway.IsZero():
		r.goAway = r.now()
	}
}

// Config returns a copy of cfg whose client speaks HTTP/2 over its own
// connections, each watched by the returned Recorder. The TLS settings of cfg
// move into the transport; credentials stay with rest (bearer token).
func Config(cfg *rest.Config) (*rest.Config, *Recorder, error) {
	tlsCfg, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("tls config: %w", err)
	}
	if tlsCfg == nil {
		return nil, nil, fmt.Errorf("h2sniff needs an https server, got %q", cfg.Host)
	}
	tlsCfg.NextProtos = []string{"h2"}
	rec := &Recorder{now: time.Now}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http2.Transport{
		TLSClientConfig: tlsCfg,
		DialTLSContext: func(ctx context.Context, network, addr string, tc *tls.Config) (net.Conn, error) {
			raw, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			conn := tls.Client(raw, tc)
			if err := conn.HandshakeContext(ctx); err != nil {
				raw.Close()
				return nil, err
			}
			return &conn2{Conn: conn, rec: rec}, nil
		},
	}
	out := rest.CopyConfig(cfg)
	out.TLSClientConfig = rest.TLSClientConfig{}
	out.Transport = tr
	out.Dial = nil
	return out, rec, nil
}

// conn2 is a client connection that parses the frames it reads. Only the
// transport's read loop calls Read.
type conn2 struct {
	net.Conn
	rec *Recorder

	hdr     [frameHeaderLen]byte
	nhdr    int    // header bytes collected
	payload []byte // control-frame payload collected (RST_STREAM code)
	left    int    // payload bytes still to come
}

func (c *conn2) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.parse(p[:n])
	return n, err
}

func (c *conn2) parse(b []byte) {
	for len(b) > 0 {
		if c.nhdr < frameHeaderLen {
			k := copy(c.hdr[c.nhdr:], b)
			c.nhdr += k
			b = b[k:]
			if c.nhdr < frameHeaderLen {
				return
			}
			c.left = int(c.hdr[0])<<16 | int(c.hdr[1])<<8 | int(c.hdr[2])
			c.payload = c.payload[:0]
		}
		k := min(c.left, len(b))
		if c.hdr[3] == frameRSTStream && len(c.payload) < 4 {
			c.payload = append(c.payload, b[:min(k, 4-len(c.payload))]...)
		}
		c.left -= k
		b = b[k:]
		if c.left == 0 {
			stream := binary.BigEndian.Uint32(c.hdr[5:9]) & 0x7fffffff
			c.rec.frame(c.hdr[3], c.hdr[4], stream, c.payload)
			c.nhdr = 0
		}
	}
}
