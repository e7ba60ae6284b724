package testcluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// process is one control plane component started by the harness.
type process struct {
	name    string
	bin     string
	args    []string
	env     []string
	cmd     *exec.Cmd
	logPath string
	logFile *os.File
	done    chan struct{}
	err     error
}

// startProcess starts bin with args and the environment env, logging
// stdout and stderr to logDir/<name>.log. The child gets SIGKILL if the
// harness dies first.
func startProcess(name, bin string, args []string, logDir string, env []string) (*process, error) {
	logPath := filepath.Join(logDir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating log for %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, bin: bin, args: args, env: env, cmd: cmd, logPath: logPath, logFile: f, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports an error if the process has already stopped.
func (p *process) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited early (%v); its log %s ends with:\n%s", p.name, p.err, p.logPath, tail(p.logPath, 20))
	default:
		return nil
	}
}

// stop sends SIGTERM, then SIGKILL after the grace period, and waits.
func (p *process) stop(grace time.Duration) {
	defer p.logFile.Close()
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	b = bytes.TrimRight(b, "\n")
	for i, count := len(b)-1, 0; i >= 0; i-- {
		if b[i] == '\n' {
			count++
			if count == n {
				return string(b[i+1:])
			}
		}
	}
	return string(b)
}

// dumpLogs writes the tail of every log file in dir to w.
func dumpLogs(w io.Writer, dir string, lines int) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		fmt.Fprintf(w, "testcluster: cannot list logs in %s: %v\n", dir, err)
		return
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		fmt.Fprintf(w, "===== %s (last %d lines) =====\n%s\n", path, lines, tail(path, lines))
	}
}

// freePorts reserves n distinct free loopback ports.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

var errNotReady = errors.New("not ready")
