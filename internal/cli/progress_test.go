package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

// Progress shows a line per step and a summary with durations on a
// terminal or at -v 1, and nothing with -o json or off a terminal.
func TestProgress(t *testing.T) {
	cases := []struct {
		name      string
		output    string
		verbosity int
		tty       bool
		shown     bool
	}{
		{"terminal", FormatText, 0, true, true},
		{"pipe", FormatText, 0, false, false},
		{"pipe at -v 1", FormatText, 1, false, true},
		{"json on a terminal", FormatJSON, 0, true, false},
		{"json at -v 2", FormatJSON, 2, false, false},
	}
	defer func(f func(io.Writer) bool) { isTerminal = f }(isTerminal)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			isTerminal = func(io.Writer) bool { return tc.tty }
			var out bytes.Buffer
			p := newProgress(&GlobalOptions{Output: tc.output, Verbosity: tc.verbosity}, &out)
			clock := time.Unix(0, 0)
			p.now = func() time.Time { return clock }
			p.start = clock
			_, _ = io.WriteString(p, "building the bundle image\npushing the bun")
			clock = clock.Add(1500 * time.Millisecond)
			_, _ = io.WriteString(p, "dle image r/b:v1 (2 KiB)\n")
			clock = clock.Add(250 * time.Millisecond)
			p.Summary("published")
			got := out.String()
			if !tc.shown {
				if got != "" {
					t.Fatalf("printed %q", got)
				}
				return
			}
			want := "building the bundle image...\npushing the bundle image r/b:v1 (2 KiB)...\npublished in 1.75s:\n" +
				"  1.5s     building the bundle image\n  250ms    pushing the bundle image r/b:v1 (2 KiB)\n"
			if got != want {
				t.Fatalf("got\n%s\nwant\n%s", got, want)
			}
			if strings.Count(got, "\n") != 5 {
				t.Fatalf("lines: %q", got)
			}
		})
	}
}
