package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestFailureLog(t *testing.T) {
	cases := map[string]struct {
		in   string
		want []string // lines of the summary after its heading
	}{
		"pass": {in: "ok  \tpkg\t1.0s\n--- PASS: TestA (0.00s)\n    a_test.go:1: fine\n"},
		"one failure with its log, noise after": {
			in:   "=== RUN TestB\n--- FAIL: TestB (1.00s)\n    b_test.go:9: want 1, got 2\n        more\ntime=x level=ERROR msg=noise\n    indented noise\nFAIL\n",
			want: []string{"--- FAIL: TestB (1.00s)", "    b_test.go:9: want 1, got 2", "        more"},
		},
		"a subtest": {
			in:   "--- FAIL: TestC (0.10s)\n    --- FAIL: TestC/x (0.00s)\n        c_test.go:3: bad\nok\n",
			want: []string{"--- FAIL: TestC (0.10s)", "    --- FAIL: TestC/x (0.00s)", "        c_test.go:3: bad"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			f := &failureLog{out: &out}
			// Written in pieces that split lines.
			for i := 0; i < len(tc.in); i += 7 {
				if _, err := f.Write([]byte(tc.in[i:min(i+7, len(tc.in))])); err != nil {
					t.Fatal(err)
				}
			}
			if out.String() != tc.in {
				t.Errorf("passed through %q, want %q", out.String(), tc.in)
			}
			got := f.summary()
			if tc.want == nil {
				if got != "" {
					t.Errorf("summary %q, want none", got)
				}
				return
			}
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")[1:]
			if strings.Join(lines, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("summary lines\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// A long failure log is cut at failureLines.
func TestFailureLogBounded(t *testing.T) {
	f := &failureLog{out: &bytes.Buffer{}}
	_, _ = f.Write([]byte("--- FAIL: TestD (0.00s)\n" + strings.Repeat("    x\n", 500)))
	if n := strings.Count(f.summary(), "\n"); n != failureLines+2 {
		t.Errorf("%d lines, want %d", n, failureLines+2)
	}
}
