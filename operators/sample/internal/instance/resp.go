package instance

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// Conn is one Redis-protocol (RESP2) connection.
type Conn struct {
	c net.Conn
	r *bufio.Reader
}

// Bounds on a reply: the operator reads servers in tenants' namespaces,
// and a server that claims a huge reply must not exhaust its memory. The
// largest reply the operator reads is INFO, a few KiB.
const (
	maxBulk  = 16 << 20
	maxArray = 1 << 16
)

// ServerError is an error reply of the server.
type ServerError string

func (e ServerError) Error() string { return string(e) }

// Dial connects to addr and authenticates with password, if any. The
// context's deadline, else timeout, bounds every later exchange too.
func Dial(ctx context.Context, t Target, timeout time.Duration) (*Conn, error) {
	d := net.Dialer{Timeout: timeout}
	c, err := d.DialContext(ctx, "tcp", t.Addr)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", t.Addr, err)
	}
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok {
		deadline = d
	}
	_ = c.SetDeadline(deadline)
	cn := &Conn{c: c, r: bufio.NewReader(c)}
	if t.Password != "" {
		if _, err := cn.Do("AUTH", t.Password); err != nil {
			cn.Close()
			return nil, fmt.Errorf("authenticating to %s: %w", t.Addr, err)
		}
	}
	return cn, nil
}

func (c *Conn) Close() { _ = c.c.Close() }

// Do sends one command and reads its reply: a string, an int64, []byte, nil
// or []any; an error reply is a ServerError.
func (c *Conn) Do(args ...string) (any, error) {
	if err := c.send(args...); err != nil {
		return nil, err
	}
	return c.reply()
}

func (c *Conn) send(args ...string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	_, err := io.WriteString(c.c, b.String())
	return err
}

func (c *Conn) line() (string, error) {
	l, err := c.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimRight(l, "\r\n"), nil
}

func (c *Conn) reply() (any, error) {
	l, err := c.line()
	if err != nil {
		return nil, err
	}
	if l == "" {
		return nil, errors.New("empty reply")
	}
	switch l[0] {
	case '+':
		return l[1:], nil
	case '-':
		return nil, ServerError(l[1:])
	case ':':
		return strconv.ParseInt(l[1:], 10, 64)
	case '$':
		n, err := length(l, maxBulk)
		if err != nil || n < 0 {
			return nil, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return nil, err
		}
		return buf[:n], nil
	case '*':
		n, err := length(l, maxArray)
		if err != nil || n < 0 {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = c.reply(); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected reply %q", l)
}

// length is the length a bulk or array reply line announces: -1 for a
// nil reply, at most limit.
func length(line string, limit int) (int, error) {
	n, err := strconv.Atoi(line[1:])
	if err != nil {
		return 0, fmt.Errorf("bad reply length %q", line)
	}
	if n > limit {
		return 0, fmt.Errorf("a reply of %d is over the %d the operator reads", n, limit)
	}
	return n, nil
}

// text is a bulk or simple string reply as a string.
func text(v any, err error) (string, error) {
	if err != nil {
		return "", err
	}
	switch v := v.(type) {
	case []byte:
		return string(v), nil
	case string:
		return v, nil
	}
	return "", fmt.Errorf("unexpected reply %T", v)
}
