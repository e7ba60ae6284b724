// Package instancetest starts real Redis-protocol servers (Debian's
// redis-server) as local processes for the data-path tests.
package instancetest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/operators/sample/internal/instance"
)

// Password of every test server.
const Password = "s3cret-test-password"

// Server is one redis-server process.
type Server struct {
	Port int
	Dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// Start runs redis-server on a free loopback port with dir as its data
// directory (a new one when empty) and the extra configuration lines; it
// is stopped when the test ends.
func Start(t testing.TB, dir string, config ...string) *Server {
	t.Helper()
	bin := testcluster.DebianProgram(t, "redis-server", "redis-server")
	if dir == "" {
		dir = t.TempDir()
	}
	port := FreePort(t)
	conf := []string{
		fmt.Sprintf("port %d", port), "bind 127.0.0.1", "dir " + dir, "requirepass " + Password, "masterauth " + Password,
		"save \"\"", "daemonize no", "repl-diskless-sync-delay 0", "logfile " + filepath.Join(dir, "server.log"),
	}
	conf = append(conf, config...)
	file := filepath.Join(dir, fmt.Sprintf("redis-%d.conf", port))
	if err := os.WriteFile(file, []byte(strings.Join(conf, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Server{Port: port, Dir: dir, cmd: exec.Command(bin, file), done: make(chan struct{})}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(s.Kill)
	// Ready once PING answers PONG: a server accepts connections while it
	// still loads its data, and answers LOADING until it has.
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := ping(s)
		if err == nil {
			return s
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			t.Fatalf("redis-server on %d did not start: %v\n%s", port, err, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func ping(s *Server) error {
	c, err := instance.Dial(context.Background(), s.Target(), 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Do("PING")
	return err
}

// Addr is host:port.
func (s *Server) Addr() string { return fmt.Sprintf("127.0.0.1:%d", s.Port) }

// Target is the server with the test password.
func (s *Server) Target() instance.Target { return instance.Target{Addr: s.Addr(), Password: Password} }

// Kill ends the server with SIGKILL, as a crashed pod: nothing is saved.
func (s *Server) Kill() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

// Pause stops the process (SIGSTOP) until Resume: a server that hangs.
func (s *Server) Pause() { _ = s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused server.
func (s *Server) Resume() { _ = s.cmd.Process.Signal(syscall.SIGCONT) }

// FreePort returns a loopback port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Keys reads prefix0 … prefix(n-1) from s: the keys it holds, with their
// values.
func Keys(t testing.TB, s *Server, prefix string, n int) map[string]string {
	t.Helper()
	c, err := instance.Dial(context.Background(), s.Target(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out := map[string]string{}
	for i := range n {
		k := fmt.Sprintf("%s%d", prefix, i)
		v, err := c.Do("GET", k)
		if err != nil {
			t.Fatalf("GET %s on %s: %v", k, s.Addr(), err)
		}
		if v != nil {
			out[k] = string(v.([]byte))
		}
	}
	return out
}

// Missing counts the keys of want that got lacks or holds another value of.
func Missing(want, got map[string]string) int {
	n := 0
	for k, v := range want {
		if got[k] != v {
			n++
		}
	}
	return n
}
