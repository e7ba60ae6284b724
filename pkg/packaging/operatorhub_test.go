package packaging

import (
	"strings"
	"testing"
)

func TestOperatorHubGaps(t *testing.T) {
	sample, err := LoadConfig(sampleDir)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		cfg  Config
		icon bool   // a base CSV carries one
		want string // "" for no warning
	}{
		{"the sample sets everything", sample, false, ""},
		{"nothing set", Config{}, false, "provider.name (an error for the validator), icon (a warning)"},
		{"no icon", Config{Provider: Link{Name: "Example"}}, false, "does not set: icon (a warning);"},
		{"icon from the base CSV", Config{Provider: Link{Name: "Example"}}, true, ""},
	}
	for _, tc := range cases {
		got := operatorHubGaps(tc.cfg, tc.icon || tc.cfg.Icon != "")
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("%s: %v", tc.name, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want) || !strings.Contains(got[0], ConfigFile)):
			t.Errorf("%s: %v, want one warning with %q", tc.name, got, tc.want)
		}
	}
}
