// Package h2raw is a client HTTP/2 connection driven frame by frame, to do
// what no well-behaved gRPC client does: open calls and never send their
// messages, cancel them halfway, or hold a connection open and never use
// it. The overload benchmarks and the server's reliability tests attack the
// server with it.
package h2raw

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
)

// Conn is a client HTTP/2 connection. Its writes may come from any
// goroutine; its frames are read by one (Serve).
type Conn struct {
	conn net.Conn
	fr   *http2.Framer

	wmu    sync.Mutex // guards the framer's writes, enc, encBuf and next
	enc    *hpack.Encoder
	encBuf bytes.Buffer
	next   uint32 // the next stream id
}

// Dial connects to addr and starts the connection.
func Dial(ctx context.Context, addr string) (*Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := New(conn)
	if err := c.Start(); err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

// New returns a connection over conn, not started yet.
func New(conn net.Conn) *Conn {
	c := &Conn{conn: conn, fr: http2.NewFramer(conn, conn), next: 1}
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	c.enc = hpack.NewEncoder(&c.encBuf)
	return c
}

// Start sends the client preface and SETTINGS. The server's SETTINGS are
// acknowledged by Serve.
func (c *Conn) Start() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := io.WriteString(c.conn, http2.ClientPreface); err != nil {
		return err
	}
	return c.fr.WriteSettings()
}

// Close closes the connection; Serve then returns.
func (c *Conn) Close() error { return c.conn.Close() }

// Open sends the HEADERS of a gRPC call to path with the extra headers
// (name, value, …), and no DATA; it returns the stream's id.
func (c *Conn) Open(path string, extra ...string) (uint32, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.encBuf.Reset()
	fields := []string{":method", "POST", ":scheme", "http", ":path", path, ":authority", "rewardd",
		"content-type", "application/grpc", "te", "trailers"}
	for _, kv := range [][]string{fields, extra} {
		for i := 0; i+1 < len(kv); i += 2 {
			c.enc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
		}
	}
	id := c.next
	c.next += 2
	return id, c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: c.encBuf.Bytes(), EndHeaders: true})
}

// WriteData sends data on stream id, ending the stream's side when end.
func (c *Conn) WriteData(id uint32, end bool, data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.fr.WriteData(id, end, data)
}

// Cancel resets stream id with CANCEL, as a client that gives up does.
func (c *Conn) Cancel(id uint32) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.fr.WriteRSTStream(id, http2.ErrCodeCancel)
}

// Ping sends a PING carrying data; Serve reports its acknowledgement to
// Handler.Pong, which tells that the server has read every frame sent
// before it.
func (c *Conn) Ping(data [8]byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.fr.WritePing(false, data)
}

// Handler is what Serve reports; a nil field is not called. Serve calls
// them from its own goroutine, one at a time.
type Handler struct {
	// Settled is called once the server's first SETTINGS are acknowledged.
	Settled func()
	// Ended is called once per stream with how it ended: the gRPC code
	// name of its grpc-status ("Unauthenticated"), "HTTP <status>" for an
	// answer other than 200, or "RST_STREAM" when it was reset without a
	// status.
	Ended func(id uint32, how string)
	// Pong is called with the data of each PING of ours the server
	// acknowledges.
	Pong func(data [8]byte)
}

// ErrGoAway is Serve's error when the server sent GOAWAY.
var ErrGoAway = errors.New("the server sent GOAWAY")

// Serve reads frames until the connection fails or the server sends
// GOAWAY: it acknowledges the server's SETTINGS and PINGs, and tells h
// what happened.
func (c *Conn) Serve(h Handler) error {
	ended := map[uint32]bool{}
	end := func(id uint32, how string) {
		if !ended[id] {
			ended[id] = true
			if h.Ended != nil {
				h.Ended(id, how)
			}
		}
	}
	for {
		f, err := c.fr.ReadFrame()
		if err != nil {
			return err
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if f.IsAck() {
				continue
			}
			c.wmu.Lock()
			err = c.fr.WriteSettingsAck()
			c.wmu.Unlock()
			if h.Settled != nil && err == nil {
				h.Settled()
				h.Settled = nil
			}
		case *http2.PingFrame:
			if f.IsAck() {
				if h.Pong != nil {
					h.Pong(f.Data)
				}
				continue
			}
			c.wmu.Lock()
			err = c.fr.WritePing(true, f.Data)
			c.wmu.Unlock()
		case *http2.MetaHeadersFrame:
			if code := f.PseudoValue("status"); code != "" && code != "200" {
				end(f.StreamID, "HTTP "+code)
				continue
			}
			for _, hf := range f.RegularFields() {
				if hf.Name == "grpc-status" {
					end(f.StreamID, codeName(hf.Value))
				}
			}
		case *http2.RSTStreamFrame:
			end(f.StreamID, "RST_STREAM")
		case *http2.GoAwayFrame:
			return ErrGoAway
		}
		if err != nil {
			return err
		}
	}
}

// codeName is the gRPC code name of a grpc-status value.
func codeName(status string) string {
	n, err := strconv.ParseUint(status, 10, 32)
	if err != nil {
		return "grpc-status " + status
	}
	return codes.Code(n).String()
}
