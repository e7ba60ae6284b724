package operatorkit

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestBoundText: tenant text reaches status and Events cut to MaxMessage
// bytes, valid UTF-8, saying how much was cut.
func TestBoundText(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
	}{
		{"short", "release failed"},
		{"exactly the bound", strings.Repeat("a", MaxMessage)},
		{"a 256 KB annotation", "cannot be imported: annotation x=" + strings.Repeat("v", 256<<10)},
		{"multi-byte runes at the cut", strings.Repeat("é", MaxMessage)},
	} {
		got := BoundText(tc.in)
		if len(got) > MaxMessage || !utf8.ValidString(got) {
			t.Errorf("%s: %d bytes, valid UTF-8 %v", tc.name, len(got), utf8.ValidString(got))
		}
		if len(tc.in) <= MaxMessage && got != tc.in {
			t.Errorf("%s: changed a short message", tc.name)
		}
		if len(tc.in) > MaxMessage && !strings.HasSuffix(got, "bytes cut)") {
			t.Errorf("%s: %q does not say it was cut", tc.name, got[len(got)-40:])
		}
	}
}
