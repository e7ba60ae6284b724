package lifecycle

import (
	"slices"
	"testing"
)

func TestWishTargetsAndRule(t *testing.T) {
	m := Standard()
	tests := []struct {
		from Phase
		want []Phase
	}{
		{Running, []Phase{Servicing, Stopping}},
		{Servicing, []Phase{Running, Stopping}},
		{Stopping, nil},
	}
	for _, tt := range tests {
		if got := m.WishTargets(tt.from, Wishable); !slices.Equal(got, tt.want) {
			t.Errorf("WishTargets(%s) = %v, want %v", tt.from, got, tt.want)
		}
	}
	const rule = "self == oldSelf || (oldSelf == 'Running' && self in ['Servicing', 'Stopping']) || (oldSelf == 'Servicing' && self in ['Running', 'Stopping'])"
	if got := m.WishRule(Wishable); got != rule {
		t.Errorf("WishRule = %s\nwant %s", got, rule)
	}
	if got := m.Phases(); !slices.Equal(got, []Phase{Starting, Running, Failed, Servicing, Stopping, Ended}) {
		t.Errorf("Phases = %v", got)
	}
}
