package podsecurity

import (
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// Levels, least strict first.
const (
	Privileged = string(psapi.LevelPrivileged)
	Baseline   = string(psapi.LevelBaseline)
	Restricted = string(psapi.LevelRestricted)
)

// Result is how a pod fares against the Pod Security Standards.
type Result struct {
	// Level is the strictest level the pod meets.
	Level string `json:"level"`
	// Refusals are, for each level stricter than Level, why it refuses the
	// pod ("host namespaces (hostNetwork=true)"), by level.
	Refusals map[string]string `json:"refusals,omitempty"`
}

// Meets reports whether the pod meets level.
func (r Result) Meets(level string) bool {
	return psapi.CompareLevels(psapi.Level(r.Level), psapi.Level(level)) >= 0
}

// Reasons says why each level stricter than Level refuses the pod, as
// "level: reasons" joined by "; ", least strict first; "" at restricted.
func (r Result) Reasons() string {
	var out []string
	for _, l := range []string{Baseline, Restricted} {
		if why, ok := r.Refusals[l]; ok {
			out = append(out, l+": "+why)
		}
	}
	return strings.Join(out, "; ")
}

// evaluator is built on first use: most runs of opctl never judge a pod.
var evaluator = sync.OnceValues(func() (policy.Evaluator, error) {
	return policy.NewEvaluator(policy.DefaultChecks(), nil)
})

// Evaluate judges a pod (its metadata and spec, as in a workload's pod
// template) at the latest policy version.
func Evaluate(meta *metav1.ObjectMeta, spec *corev1.PodSpec) (Result, error) {
	e, err := evaluator()
	if err != nil {
		return Result{}, fmt.Errorf("pod security evaluator: %w", err)
	}
	if meta == nil {
		meta = &metav1.ObjectMeta{}
	}
	res := Result{Level: Restricted, Refusals: map[string]string{}}
	for _, l := range []psapi.Level{psapi.LevelRestricted, psapi.LevelBaseline} {
		agg := policy.AggregateCheckResults(e.EvaluatePod(psapi.LevelVersion{Level: l, Version: psapi.LatestVersion()}, meta, spec))
		if agg.Allowed {
			break
		}
		res.Refusals[string(l)] = agg.ForbiddenDetail()
		res.Level = Baseline
		if l == psapi.LevelBaseline {
			res.Level = Privileged
		}
	}
	if len(res.Refusals) == 0 {
		res.Refusals = nil
	}
	return res, nil
}
