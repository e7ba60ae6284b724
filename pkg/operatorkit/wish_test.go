package operatorkit

import (
	"testing"

	"opctl.dev/opctl/pkg/operatorkit/lifecycle"
)

func TestWishMessage(t *testing.T) {
	m := lifecycle.Standard()
	tests := []struct {
		at, wished lifecycle.Phase
		waiting    string
		want       string
	}{
		{lifecycle.Starting, lifecycle.Servicing, "the application to become available", "wished Servicing: waiting for the application to become available"},
		{lifecycle.Ended, lifecycle.Running, "", "wished Running, which Ended cannot reach"},
		{lifecycle.Running, lifecycle.Stopping, "", "wished Stopping: waiting for its guard"},
	}
	for _, tt := range tests {
		if got := wishMessage(m, tt.at, tt.wished, tt.waiting); got != tt.want {
			t.Errorf("wishMessage(%s, %s) = %q, want %q", tt.at, tt.wished, got, tt.want)
		}
	}
}
