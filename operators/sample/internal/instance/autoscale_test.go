package instance_test

import (
	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/operators/sample/internal/instance"
	"opctl.dev/opctl/operators/sample/internal/instance/instancetest"
)

func TestAutoscaleDecisions(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	p := instance.ScalePolicy{Min: 1, Max: 5, Target: 1000, Cooldown: 5 * time.Minute}
	long := now.Add(-time.Hour)
	tests := []struct {
		name    string
		current int32
		ops     int64
		last    time.Time
		want    int32
	}{
		{"idle stays at the minimum", 1, 0, time.Time{}, 1},
		{"load scales out at once to what it needs", 1, 3500, time.Time{}, 4},
		{"never above the maximum", 2, 90000, long, 5},
		{"at the target stays", 3, 3000, long, 3},
		{"a little under the target stays (hysteresis)", 3, 1700, long, 3},
		{"well under scales in by one", 3, 1500, long, 2},
		{"scaling in waits for the cool-down", 3, 100, now.Add(-time.Minute), 3},
		{"scaling out waits for the cool-down", 2, 5000, now.Add(-time.Minute), 2},
		{"outside the bounds is brought in", 9, 0, now, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := instance.Autoscale(p, tt.current, tt.ops, tt.last, now)
			if d.Replicas != tt.want || d.Reason == "" {
				t.Errorf("Autoscale(%d, %d ops/s) = %+v, want %d", tt.current, tt.ops, d, tt.want)
			}
		})
	}
}

// TestAutoscaleUnderLoad reads real load, from redis-benchmark against a
// real server, through Status and decides on it: out while the load runs,
// in once it stops and the cool-down has passed.
func TestAutoscaleUnderLoad(t *testing.T) {
	bench := testcluster.DebianProgram(t, "redis-benchmark", "redis-tools")
	s := instancetest.Start(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	load := exec.CommandContext(ctx, bench, "-h", "127.0.0.1", "-p", fmt.Sprint(s.Port), "-a", instancetest.Password,
		"-c", "8", "-n", "100000000", "-t", "set,get", "-q")
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}
	p := instance.ScalePolicy{Min: 1, Max: 4, Target: 2000, Cooldown: time.Minute}
	var busy instance.Status
	waitFor(t, "the load to show in INFO", func() bool {
		st, err := resp.Status(ctx, s.Target())
		busy = st
		return err == nil && st.OpsPerSecond > 4*p.Target
	})
	start := time.Now()
	out := instance.Autoscale(p, 1, busy.OpsPerSecond, time.Time{}, start)
	t.Logf("under load: %d ops/s → %+v", busy.OpsPerSecond, out)
	if out.Replicas != p.Max {
		t.Errorf("under %d ops/s with a target of %d, decided %d replicas, want %d", busy.OpsPerSecond, p.Target, out.Replicas, p.Max)
	}
	cancel()
	_ = load.Wait()

	var idle instance.Status
	waitFor(t, "the load to fade from INFO", func() bool {
		st, err := instance.RESP{}.Status(context.Background(), s.Target())
		idle = st
		return err == nil && st.OpsPerSecond < p.Target/10
	})
	cooling := instance.Autoscale(p, out.Replicas, idle.OpsPerSecond, start, start.Add(10*time.Second))
	after := instance.Autoscale(p, out.Replicas, idle.OpsPerSecond, start, start.Add(2*time.Minute))
	t.Logf("idle: %d ops/s → within the cool-down %+v; after it %+v", idle.OpsPerSecond, cooling, after)
	if cooling.Replicas != out.Replicas || after.Replicas != out.Replicas-1 {
		t.Errorf("idle decisions %d then %d, want %d then %d", cooling.Replicas, after.Replicas, out.Replicas, out.Replicas-1)
	}
}
