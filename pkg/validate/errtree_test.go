package validate

import "testing"

func TestCanonicalTree(t *testing.T) {
	a := "invalid index:\n└── invalid package \"p\":\n    ├── invalid channel \"b\":\n    │   └── channel must contain at least one bundle\n    └── invalid channel \"a\":\n        ├── z\n        └── y\n"
	b := "invalid index:\n└── invalid package \"p\":\n    ├── invalid channel \"a\":\n    │   ├── y\n    │   └── z\n    └── invalid channel \"b\":\n        └── channel must contain at least one bundle\n"
	want := "invalid index:\n└── invalid package \"p\":\n    ├── invalid channel \"a\":\n    │   ├── y\n    │   └── z\n    └── invalid channel \"b\":\n        └── channel must contain at least one bundle"
	for _, in := range []string{a, b} {
		if got := canonicalTree(in); got != want {
			t.Errorf("canonicalTree(%q) =\n%s\nwant\n%s", in, got, want)
		}
	}
	if got := canonicalTree("plain error"); got != "plain error" {
		t.Errorf("plain text changed: %q", got)
	}
}
