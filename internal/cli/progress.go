package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// isTerminal reports whether w is a terminal; tests replace it.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progress writes the steps of a long command, one line each, to stderr:
// on a terminal with text output, or at -v 1 and above anywhere; never
// with -o json. Summary ends it with the time each step took.
type progress struct {
	mu    sync.Mutex
	w     io.Writer // nil: silent
	now   func() time.Time
	start time.Time
	steps []step
	buf   bytes.Buffer
}

type step struct {
	line  string
	began time.Time
}

func newProgress(g *GlobalOptions, stderr io.Writer) *progress {
	p := &progress{now: time.Now}
	p.start = p.now()
	if g.Output == FormatText && (isTerminal(stderr) || g.Verbosity >= 1) {
		p.w = stderr
	}
	return p
}

// Write takes step lines as the library writes them.
func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf.Write(b)
	for {
		line, err := p.buf.ReadString('\n')
		if err != nil { // an incomplete line: keep it for the next Write
			p.buf.Reset()
			p.buf.WriteString(line)
			return len(b), nil
		}
		line = strings.TrimSuffix(line, "\n")
		p.steps = append(p.steps, step{line: line, began: p.now()})
		if p.w != nil {
			fmt.Fprintf(p.w, "%s...\n", line)
		}
	}
}

// Summary writes what was done with each step's duration: a step lasts
// until the next one begins, the last one until now.
func (p *progress) Summary(what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.w == nil || len(p.steps) == 0 {
		return
	}
	end := p.now()
	fmt.Fprintf(p.w, "%s in %s:\n", what, round(end.Sub(p.start)))
	for i, s := range p.steps {
		next := end
		if i+1 < len(p.steps) {
			next = p.steps[i+1].began
		}
		fmt.Fprintf(p.w, "  %-8s %s\n", round(next.Sub(s.began)), s.line)
	}
}

func round(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Millisecond)
}
