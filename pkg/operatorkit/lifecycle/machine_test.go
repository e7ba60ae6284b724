package lifecycle

import (
	"errors"
	"strings"
	"testing"
)

func TestStandardNext(t *testing.T) {
	m := Standard()
	tests := []struct {
		name    string
		from    Phase
		facts   Facts
		want    Phase
		waiting string
	}{
		{"empty phase starts", "", Facts{}, Starting, "the application to become available"},
		{"starting waits for availability", Starting, Facts{Progressing: true}, Starting, "the application to become available"},
		{"starting to running", Starting, Facts{Available: true}, Running, ""},
		{"starting stalls", Starting, Facts{Stalled: true}, Failed, ""},
		{"running to servicing on change", Running, Facts{Available: true, Progressing: true}, Servicing, ""},
		{"running stays when stalled but available", Running, Facts{Available: true, Stalled: true}, Running, "a change to roll out"},
		{"servicing back to running", Servicing, Facts{Available: true}, Running, ""},
		{"servicing waits while progressing", Servicing, Facts{Available: true, Progressing: true}, Servicing, "the rollout to finish"},
		{"failed restarts once fixed", Failed, Facts{}, Starting, ""},
		{"deletion wins", Running, Facts{Deleting: true, Available: true, Progressing: true}, Stopping, ""},
		{"stopping waits for cleanup", Stopping, Facts{Deleting: true}, Stopping, "managed objects to be removed or disconnected"},
		{"stopping ends", Stopping, Facts{Deleting: true, Gone: true}, Ended, ""},
		{"ended is final", Ended, Facts{Available: true}, Ended, ""},
		{"wished servicing", Running, Facts{Available: true, Wished: Servicing}, Servicing, ""},
		{"servicing stays while wished", Servicing, Facts{Available: true, Wished: Servicing}, Servicing, "the rollout to finish"},
		{"wished running again", Servicing, Facts{Available: true, Wished: Running}, Running, ""},
		{"wished stop", Running, Facts{Available: true, Wished: Stopping}, Stopping, ""},
		{"a wish to stop wins over a rollout", Running, Facts{Available: true, Progressing: true, Wished: Stopping}, Stopping, ""},
		{"stop waits for the application", Stopping, Facts{Wished: Stopping}, Stopping, "the application to stop"},
		{"stopped", Stopping, Facts{Wished: Stopping, Gone: true}, Ended, ""},
		{"ended stays ended whatever is wished", Ended, Facts{Available: true, Wished: Running}, Ended, ""},
		{"starting cannot service yet", Starting, Facts{Wished: Servicing}, Starting, "the application to become available"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, waiting := m.Next(tt.from, tt.facts)
			if got != tt.want || waiting != tt.waiting {
				t.Errorf("Next(%q, %+v) = %q, %q; want %q, %q", tt.from, tt.facts, got, waiting, tt.want, tt.waiting)
			}
		})
	}
}

func TestRequest(t *testing.T) {
	m := Standard()
	tests := []struct {
		name      string
		from, to  Phase
		facts     Facts
		wantOK    bool
		wantErr   string
		wantUntil string
	}{
		{"allowed and guard holds", Starting, Running, Facts{Available: true}, true, "", ""},
		{"allowed but waiting", Starting, Running, Facts{}, false, "", "the application to become available"},
		{"same phase is a no-op", Running, Running, Facts{}, true, "", ""},
		{"not an edge", Ended, Running, Facts{Available: true}, false, "lifecycle transition Ended → Running is not allowed; from Ended the graph allows: none", ""},
		{"not an edge lists targets", Stopping, Running, Facts{}, false, "from Stopping the graph allows: Ended", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, until, err := m.Request(tt.from, tt.to, tt.facts)
			if tt.wantErr != "" {
				var refused *RefusedError
				if !errors.As(err, &refused) || !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want a RefusedError containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || ok != tt.wantOK || until != tt.wantUntil {
				t.Errorf("Request = %v, %q, %v; want %v, %q, nil", ok, until, err, tt.wantOK, tt.wantUntil)
			}
		})
	}
}

func TestNewRejectsBadGraphs(t *testing.T) {
	always := func(Facts) (bool, string) { return true, "" }
	if _, err := New(Starting, Transition{From: Starting, To: Running}); err == nil {
		t.Error("a transition without a guard was accepted")
	}
	if _, err := New(Starting, Transition{Starting, Running, always}, Transition{Starting, Running, always}); err == nil {
		t.Error("a duplicate transition was accepted")
	}
}
