package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
)

// failureLog passes go test's output through and keeps every "--- FAIL"
// block (the line and the indented lines under it, the test's own log),
// so that a failure's message can be printed again at the very end, after
// everything a long run printed since.
type failureLog struct {
	mu      sync.Mutex
	out     io.Writer
	partial []byte
	in      bool // inside a block
	lines   int  // lines kept of the current block
	blocks  []string
}

// Bounds of what is printed again: lines per block, blocks in all.
const (
	failureLines  = 80
	failureBlocks = 20
)

func (f *failureLog) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.partial = append(f.partial, p...)
	for {
		i := bytes.IndexByte(f.partial, '\n')
		if i < 0 {
			break
		}
		f.line(string(f.partial[:i]))
		f.partial = f.partial[i+1:]
	}
	return f.out.Write(p)
}

func (f *failureLog) line(l string) {
	trimmed := strings.TrimLeft(l, " ")
	switch {
	case strings.HasPrefix(trimmed, "--- FAIL: "):
		if len(f.blocks) < failureBlocks {
			f.in, f.lines = true, 1
			f.blocks = append(f.blocks, l)
		}
	case f.in && (strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "\t")):
		if f.lines++; f.lines <= failureLines {
			f.blocks[len(f.blocks)-1] += "\n" + l
		} else if f.lines == failureLines+1 {
			f.blocks[len(f.blocks)-1] += "\n    …"
		}
	default:
		f.in = false
	}
}

// summary is the kept blocks, or "" when no test failed.
func (f *failureLog) summary() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.blocks) == 0 {
		return ""
	}
	return fmt.Sprintf("testcluster: the failed tests, again:\n%s\n", strings.Join(f.blocks, "\n"))
}
