package instance

import (
	"fmt"
	"time"
)

// ScalePolicy is spec.autoscaling, in the data path's terms.
type ScalePolicy struct {
	Min, Max int32
	// Target is the operations per second one replica should serve.
	Target int64
	// Cooldown is the least time between two scalings.
	Cooldown time.Duration
	// DownThreshold is the fraction of the target below which the load
	// per replica, after removing one, must fall before scaling in: the
	// hysteresis that stops flapping. Zero is 0.8.
	DownThreshold float64
}

// ScaleDecision is Autoscale's answer.
type ScaleDecision struct {
	Replicas int32
	// Reason explains it, with the figures.
	Reason string
}

// Autoscale decides the number of replicas from the total operations per
// second the servers report. It scales out at once to what the load needs
// (ceil(load / target)), and in by one only when the remaining replicas
// would each serve less than DownThreshold of the target, and never
// within Cooldown of the last scaling.
func Autoscale(p ScalePolicy, current int32, opsPerSecond int64, lastScale, now time.Time) ScaleDecision {
	clamp := func(n int32) int32 { return max(p.Min, min(p.Max, n)) }
	if p.Target <= 0 {
		return ScaleDecision{clamp(current), "no target"}
	}
	need := clamp(int32((opsPerSecond + p.Target - 1) / p.Target))
	cooling := !lastScale.IsZero() && now.Sub(lastScale) < p.Cooldown
	down := p.DownThreshold
	if down == 0 {
		down = 0.8
	}
	switch {
	case current < p.Min || current > p.Max:
		return ScaleDecision{clamp(current), fmt.Sprintf("%d replicas is outside %d–%d", current, p.Min, p.Max)}
	case need > current && cooling:
		return ScaleDecision{current, fmt.Sprintf("%d ops/s needs %d replicas; cooling down until %s", opsPerSecond, need, lastScale.Add(p.Cooldown).UTC().Format(time.RFC3339))}
	case need > current:
		return ScaleDecision{need, fmt.Sprintf("%d ops/s over %d replicas exceeds %d ops/s each", opsPerSecond, current, p.Target)}
	case current > p.Min && float64(opsPerSecond) < down*float64(p.Target)*float64(current-1):
		if cooling {
			return ScaleDecision{current, fmt.Sprintf("%d ops/s fits %d replicas; cooling down until %s", opsPerSecond, current-1, lastScale.Add(p.Cooldown).UTC().Format(time.RFC3339))}
		}
		return ScaleDecision{current - 1, fmt.Sprintf("%d ops/s on %d replicas stays under %.0f%% of %d ops/s each", opsPerSecond, current-1, down*100, p.Target)}
	}
	return ScaleDecision{current, fmt.Sprintf("%d ops/s on %d replicas is within target", opsPerSecond, current)}
}
