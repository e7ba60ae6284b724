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
		want string // "" for no warning
	}{
		{"the sample sets everything", sample, ""},
		{"nothing set", Config{}, "provider.name (an error for the validator), icon (a warning)"},
		{"no icon", Config{Provider: Link{Name: "Example"}}, "does not set: icon (a warning);"},
	}
	for _, tc := range cases {
		got := operatorHubGaps(tc.cfg)
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("%s: %v", tc.name, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want) || !strings.Contains(got[0], ConfigFile)):
			t.Errorf("%s: %v, want one warning with %q", tc.name, got, tc.want)
		}
	}
}
