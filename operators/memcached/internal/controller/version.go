package controller

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// Version asks the memcached server at addr for its version, with the
// text protocol's version command.
func Version(ctx context.Context, addr string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("connecting to memcached: %w", err)
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	if _, err := conn.Write([]byte("version\r\n")); err != nil {
		return "", fmt.Errorf("asking memcached its version: %w", err)
	}
	// A reply is one short line; bound what a server can make us read.
	line, err := bufio.NewReader(io.LimitReader(conn, 256)).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("reading memcached's version: %w", err)
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(line), "VERSION ")
	if !ok {
		return "", fmt.Errorf("memcached answered %q to version", strings.TrimSpace(line))
	}
	return v, nil
}
