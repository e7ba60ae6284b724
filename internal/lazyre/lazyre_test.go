package lazyre

import "testing"

func TestNew(t *testing.T) {
	re := New(`^v[0-9]+$`)
	if first, second := re(), re(); first != second {
		t.Error("the expression was compiled twice")
	}
	tests := []struct {
		in   string
		want bool
	}{
		{"v1", true},
		{"v1beta1", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := re().MatchString(tt.in); got != tt.want {
			t.Errorf("MatchString(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestNewInvalidPanicsOnUse(t *testing.T) {
	re := New(`(`) // no panic yet: nothing compiled
	defer func() {
		if recover() == nil {
			t.Error("an invalid expression did not panic on first use")
		}
	}()
	re()
}
