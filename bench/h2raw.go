package bench

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

// h2conn is a client HTTP/2 connection driven frame by frame, to do what no
// well-behaved client does: open gRPC calls and never send their messages,
// or hold a connection open and never use it. Writes may come from any
// goroutine; frames are read by one (serve).
type h2conn struct {
	conn net.Conn
	fr   *http2.Framer

	wmu    sync.Mutex // guards the framer's writes, enc, encBuf and next
	enc    *hpack.Encoder
	encBuf bytes.Buffer
	next   uint32 // the next stream id
}

// dialH2 connects to addr and starts the connection.
func dialH2(ctx context.Context, addr string) (*h2conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := newH2conn(conn)
	if err := c.start(); err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

func newH2conn(conn net.Conn) *h2conn {
	c := &h2conn{conn: conn, fr: http2.NewFramer(conn, conn), next: 1}
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	c.enc = hpack.NewEncoder(&c.encBuf)
	return c
}

// start sends the client preface and SETTINGS. The server's SETTINGS are
// acknowledged by serve.
func (c *h2conn) start() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := io.WriteString(c.conn, http2.ClientPreface); err != nil {
		return err
	}
	return c.fr.WriteSettings()
}

func (c *h2conn) close() error { return c.conn.Close() }

// open sends the HEADERS of a gRPC call to path with the extra headers
// (name, value, …), and never any DATA; it returns the stream's id.
func (c *h2conn) open(path string, extra ...string) (uint32, error) {
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

// errGoAway is serve's error when the server sent GOAWAY.
var errGoAway = errors.New("the server sent GOAWAY")

// serve reads frames until the connection fails or the server sends
// GOAWAY: it acknowledges the server's SETTINGS and PINGs, and calls done
// with a stream's id and how it ended, once per stream: the grpc-status of
// its HEADERS (as a gRPC code name), or "RST_STREAM" when reset without
// one. settled, when not nil, is called once the server's first SETTINGS
// are acknowledged.
func (c *h2conn) serve(settled func(), done func(id uint32, how string)) error {
	ended := map[uint32]bool{}
	end := func(id uint32, how string) {
		if !ended[id] {
			ended[id] = true
			done(id, how)
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
			if settled != nil && err == nil {
				settled()
				settled = nil
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				c.wmu.Lock()
				err = c.fr.WritePing(true, f.Data)
				c.wmu.Unlock()
			}
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
			return errGoAway
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
