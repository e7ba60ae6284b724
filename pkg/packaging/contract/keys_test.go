package contract

import (
	"reflect"
	"testing"
)

func TestInstallModes(t *testing.T) {
	tests := []struct {
		modes   map[string]bool
		text    string
		allOnly bool
	}{
		{map[string]bool{AllNamespaces: true, OwnNamespace: true, SingleNamespace: true, MultiNamespace: true}, "OwnNamespace,SingleNamespace,MultiNamespace,AllNamespaces", false},
		{map[string]bool{AllNamespaces: true, SingleNamespace: true}, "SingleNamespace,AllNamespaces", false},
		{map[string]bool{AllNamespaces: true, OwnNamespace: false}, "AllNamespaces", true},
	}
	for _, tt := range tests {
		if got := FormatInstallModes(tt.modes); got != tt.text {
			t.Errorf("FormatInstallModes(%v) = %q, want %q", tt.modes, got, tt.text)
		}
		back := ParseInstallModes(tt.text + ", ")
		for m, on := range tt.modes {
			if back[m] != on {
				t.Errorf("ParseInstallModes(%q)[%s] = %v, want %v", tt.text, m, back[m], on)
			}
		}
		if got := AllNamespacesOnly(tt.text); got != tt.allOnly {
			t.Errorf("AllNamespacesOnly(%q) = %v, want %v", tt.text, got, tt.allOnly)
		}
	}
}

func TestLevelAtLeast(t *testing.T) {
	for _, tt := range []struct {
		level, min string
		want       bool
	}{
		{"restricted", "baseline", true},
		{"baseline", "restricted", false},
		{"privileged", "baseline", false},
		{"privileged", "privileged", true},
		{"", "baseline", false},
		{"restricted", "", true},
	} {
		if got := LevelAtLeast(tt.level, tt.min); got != tt.want {
			t.Errorf("LevelAtLeast(%q, %q) = %v, want %v", tt.level, tt.min, got, tt.want)
		}
	}
}

func TestStandIns(t *testing.T) {
	fill := func(path string) any { return "<" + path + ">" }
	cases := []struct {
		ann  string
		want map[string]any
	}{
		{"", map[string]any{}},
		{"conversion.release", map[string]any{"conversion": map[string]any{"release": "<conversion.release>"}}},
		{" placeholders.A, placeholders.B ,images.x", map[string]any{
			"placeholders": map[string]any{"A": "<placeholders.A>", "B": "<placeholders.B>"},
			"images":       map[string]any{"x": "<images.x>"}}},
		{"top", map[string]any{"top": "<top>"}},
	}
	for _, tc := range cases {
		if got := StandIns(tc.ann, fill); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("StandIns(%q) = %v, want %v", tc.ann, got, tc.want)
		}
	}
}
