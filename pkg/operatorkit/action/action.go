package action

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"opctl.dev/opctl/pkg/operatorkit/kitapi"
)

// LabelAction names the action on its Job and pods.
const LabelAction = "operatorkit.opctl.dev/action"

// Action is one long action of a custom resource.
type Action struct {
	// Name of the action, such as backup: a DNS label.
	Name string
	// Key identifies one run; a new key starts a new run. Default: the
	// resource's generation.
	Key string
	// Template is the pod the Job runs. RestartPolicy defaults to Never,
	// and containers report their termination message, or the tail of
	// their log, on failure.
	Template corev1.PodTemplateSpec
	// Deadline bounds the run (the Job's activeDeadlineSeconds); zero is
	// none.
	Deadline time.Duration
	// Retries is how many failed pods are retried, with exponential
	// backoff (the Job's backoffLimit).
	Retries int32
	// TTL deletes the Job this long after it finished; zero keeps it until
	// the resource goes.
	TTL time.Duration
}

// Runner starts and observes actions.
type Runner struct {
	Client client.Client
	Scheme *runtime.Scheme
	// Recorder, when set, gets an Event when an action starts, succeeds
	// or fails.
	Recorder events.EventRecorder
}

// Run starts the run of a for owner if last (the status kept from an
// earlier reconcile, or nil) is not of the same key, observes its Job and
// returns the new status. A finished run is returned as it is: its Job
// may be gone.
func (r *Runner) Run(ctx context.Context, owner client.Object, a Action, last *kitapi.ActionStatus) (kitapi.ActionStatus, error) {
	key := a.Key
	if key == "" {
		key = fmt.Sprint(owner.GetGeneration())
	}
	if last != nil && last.Name == a.Name && last.Key == key && last.Finished() {
		return *last, nil
	}
	st := kitapi.ActionStatus{Name: a.Name, Key: key, Job: JobName(owner.GetName(), a.Name, key), Phase: kitapi.ActionPending}
	if last != nil && last.Name == a.Name && last.Key == key {
		st.StartTime = last.StartTime
	}
	job := &batchv1.Job{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: owner.GetNamespace(), Name: st.Job}, job)
	switch {
	case apierrors.IsNotFound(err):
		if job, err = r.create(ctx, owner, a, st); err != nil {
			return st, err
		}
		st.StartTime = ptr.To(metav1.Now())
		r.event(owner, "Normal", "ActionStarted", "%s %s started (Job %s)", a.Name, key, st.Job)
	case err != nil:
		return st, fmt.Errorf("reading Job %s: %w", st.Job, err)
	}
	if !metav1.IsControlledBy(job, owner) {
		return st, fmt.Errorf("job %s exists and is not %s's: delete or rename it", st.Job, owner.GetName())
	}
	if err := r.observe(ctx, job, &st); err != nil {
		return st, err
	}
	switch {
	case st.Phase == kitapi.ActionSucceeded && (last == nil || last.Phase != st.Phase || last.Key != key):
		r.event(owner, "Normal", "ActionSucceeded", "%s %s succeeded", a.Name, key)
	case st.Phase == kitapi.ActionFailed && (last == nil || last.Phase != st.Phase || last.Key != key):
		r.event(owner, "Warning", "ActionFailed", "%s %s failed: %s", a.Name, key, st.Message)
	}
	return st, nil
}

// create makes the run's Job, owned by owner.
func (r *Runner) create(ctx context.Context, owner client.Object, a Action, st kitapi.ActionStatus) (*batchv1.Job, error) {
	tmpl := *a.Template.DeepCopy()
	if tmpl.Labels == nil {
		tmpl.Labels = map[string]string{}
	}
	tmpl.Labels[LabelAction] = a.Name
	if tmpl.Spec.RestartPolicy == "" {
		tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	}
	for i := range tmpl.Spec.Containers {
		if tmpl.Spec.Containers[i].TerminationMessagePolicy == "" {
			tmpl.Spec.Containers[i].TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
		}
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: owner.GetNamespace(), Name: st.Job, Labels: map[string]string{LabelAction: a.Name}},
		Spec:       batchv1.JobSpec{Template: tmpl, BackoffLimit: ptr.To(a.Retries)},
	}
	if a.Deadline > 0 {
		job.Spec.ActiveDeadlineSeconds = ptr.To(int64(a.Deadline.Seconds()))
	}
	if a.TTL > 0 {
		job.Spec.TTLSecondsAfterFinished = ptr.To(int32(a.TTL.Seconds()))
	}
	if err := controllerutil.SetControllerReference(owner, job, r.Scheme); err != nil {
		return nil, err
	}
	if err := r.Client.Create(ctx, job); err != nil {
		return nil, fmt.Errorf("creating Job %s: %w", job.Name, err)
	}
	return job, nil
}

// JobName is the Job of one run: the owner's name, the action and a hash
// of the key, within the 63 characters a Job's name may have.
func JobName(owner, action, key string) string {
	sum := sha256.Sum256([]byte(key))
	suffix := "-" + action + "-" + hex.EncodeToString(sum[:])[:8]
	if limit := 63 - len(suffix); len(owner) > limit {
		owner = strings.TrimRight(owner[:limit], "-.")
	}
	return owner + suffix
}

func (r *Runner) event(owner client.Object, typ, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(owner, nil, typ, reason, reason, format, args...)
	}
}
