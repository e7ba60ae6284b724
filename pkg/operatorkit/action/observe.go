package action

import (
	"context"
	"fmt"
	"sort"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/pkg/operatorkit/kitapi"
)

// observe reads the Job's phase into st: Succeeded or Failed once the Job
// says so, Running while one of its pods is ready or running, else
// Pending.
func (r *Runner) observe(ctx context.Context, job *batchv1.Job, st *kitapi.ActionStatus) error {
	js := job.Status
	st.Attempts = js.Active + js.Failed + js.Succeeded
	if js.StartTime != nil && st.StartTime == nil {
		st.StartTime = js.StartTime.DeepCopy()
	}
	for _, c := range js.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			st.Phase, st.CompletionTime = kitapi.ActionSucceeded, completion(job, c)
			msg, err := r.terminationMessage(ctx, job, true)
			st.Message = msg
			return err
		case batchv1.JobFailed:
			st.Phase, st.CompletionTime = kitapi.ActionFailed, completion(job, c)
			st.Message = fmt.Sprintf("%s: %s", c.Reason, c.Message)
			msg, err := r.terminationMessage(ctx, job, false)
			if err != nil {
				return err
			}
			if msg != "" {
				st.Message = fmt.Sprintf("%s (%s)", msg, c.Reason)
			}
			return nil
		}
	}
	st.Phase = kitapi.ActionPending
	if js.Ready != nil && *js.Ready > 0 {
		st.Phase = kitapi.ActionRunning
	}
	return nil
}

func completion(job *batchv1.Job, c batchv1.JobCondition) *metav1.Time {
	if job.Status.CompletionTime != nil {
		return job.Status.CompletionTime.DeepCopy()
	}
	return c.LastTransitionTime.DeepCopy()
}

// terminationMessage is the termination message of the last container
// that failed (or, with succeeded, exited 0) in the Job's pods, bounded to
// 1 KiB: a failure's cause, or a success's result.
func (r *Runner) terminationMessage(ctx context.Context, job *batchv1.Job, succeeded bool) (string, error) {
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(job.Namespace), client.MatchingLabels{batchv1.JobNameLabel: job.Name}); err != nil {
		return "", fmt.Errorf("listing the pods of Job %s: %w", job.Name, err)
	}
	type failure struct {
		at  metav1.Time
		msg string
	}
	var failures []failure
	for _, p := range pods.Items {
		if !metav1.IsControlledBy(&p, job) {
			continue
		}
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && (t.ExitCode == 0) == succeeded && strings.TrimSpace(t.Message) != "" {
				failures = append(failures, failure{t.FinishedAt, strings.TrimSpace(t.Message)})
			}
		}
	}
	if len(failures) == 0 {
		return "", nil
	}
	sort.SliceStable(failures, func(i, j int) bool { return failures[i].at.Before(&failures[j].at) })
	msg := failures[len(failures)-1].msg
	if len(msg) > 1024 {
		msg = msg[:1024] + "…"
	}
	return msg, nil
}
