package action_test

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"opctl.dev/opctl/pkg/operatorkit/action"
	"opctl.dev/opctl/pkg/operatorkit/kitapi"
)

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	return s
}

func owner(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: "uid-" + "1", Generation: 3}}
}

func backup() action.Action {
	return action.Action{Name: "backup", Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "backup", Image: "kv:1"}}}},
		Deadline: time.Minute, Retries: 2, TTL: time.Hour}
}

func TestJobName(t *testing.T) {
	long := strings.Repeat("a", 58) + "-b"
	tests := []struct{ owner, action, key string }{
		{"store", "backup", "3"}, {long, "backup", "3"}, {strings.Repeat("x", 80), "failover", "k"},
	}
	for _, tt := range tests {
		n := action.JobName(tt.owner, tt.action, tt.key)
		if len(n) > 63 || strings.Contains(n, "--") || n != action.JobName(tt.owner, tt.action, tt.key) {
			t.Errorf("JobName(%q) = %q: want at most 63 characters, no empty segment, the same each time", tt.owner, n)
		}
	}
	if action.JobName("s", "backup", "1") == action.JobName("s", "backup", "2") {
		t.Errorf("two keys give one Job name")
	}
}

func TestRunStartsOnceByKey(t *testing.T) {
	ctx := context.Background()
	cl := fake.NewClientBuilder().WithScheme(newScheme()).Build()
	rec := events.NewFakeRecorder(10)
	r := &action.Runner{Client: cl, Scheme: newScheme(), Recorder: rec}
	o := owner("store")
	st, err := r.Run(ctx, o, backup(), nil)
	if err != nil || st.Phase != kitapi.ActionPending || st.Key != "3" || st.StartTime == nil {
		t.Fatalf("first run: %+v, %v; want Pending for key 3 (the generation)", st, err)
	}
	again, err := r.Run(ctx, o, backup(), &st)
	if err != nil || again.Job != st.Job {
		t.Fatalf("second run: %+v, %v", again, err)
	}
	var jobs batchv1.JobList
	if err := cl.List(ctx, &jobs); err != nil || len(jobs.Items) != 1 {
		t.Fatalf("%d Jobs after two runs of one key (%v), want 1", len(jobs.Items), err)
	}
	j := jobs.Items[0]
	if *j.Spec.BackoffLimit != 2 || *j.Spec.ActiveDeadlineSeconds != 60 || *j.Spec.TTLSecondsAfterFinished != 3600 ||
		j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever || !metav1.IsControlledBy(&j, o) ||
		j.Spec.Template.Spec.Containers[0].TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
		t.Errorf("Job spec %+v", j.Spec)
	}
	a := backup()
	a.Key = "manual-1"
	if _, err := r.Run(ctx, o, a, &st); err != nil {
		t.Fatal(err)
	}
	if err := cl.List(ctx, &jobs); err != nil || len(jobs.Items) != 2 {
		t.Errorf("%d Jobs after a new key, want 2", len(jobs.Items))
	}
	if got := len(rec.Events); got != 2 {
		t.Errorf("%d events, want one ActionStarted per run", got)
	}
}

func TestRunObservesTheJob(t *testing.T) {
	now := metav1.Now()
	exited := func(code int32, msg string, at time.Time) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: msg, FinishedAt: metav1.NewTime(at)}}}}}}
	}
	failedPod := func(msg string, at time.Time) *corev1.Pod { return exited(1, msg, at) }
	tests := []struct {
		name    string
		status  batchv1.JobStatus
		pods    []*corev1.Pod
		phase   kitapi.ActionPhase
		message string
	}{
		{"created", batchv1.JobStatus{}, nil, kitapi.ActionPending, ""},
		{"a pod not ready yet", batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](0)}, nil, kitapi.ActionPending, ""},
		{"a pod ready", batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](1)}, nil, kitapi.ActionRunning, ""},
		{"complete", batchv1.JobStatus{Succeeded: 1, CompletionTime: &now, Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}, nil, kitapi.ActionSucceeded, ""},
		{"complete with a result", batchv1.JobStatus{Failed: 1, Succeeded: 1, CompletionTime: &now, Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}},
			[]*corev1.Pod{failedPod("timeout", now.Add(-time.Minute)), exited(0, `{"size":42}`, now.Time)}, kitapi.ActionSucceeded, `{"size":42}`},
		{"failed, last pod's message", batchv1.JobStatus{Failed: 2, Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"}}},
			[]*corev1.Pod{failedPod("disk full", now.Add(-time.Minute)), failedPod("bucket unreachable", now.Time)}, kitapi.ActionFailed, "bucket unreachable (BackoffLimitExceeded)"},
		{"failed, no message", batchv1.JobStatus{Failed: 1, Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded", Message: "Job was active longer than specified deadline"}}},
			nil, kitapi.ActionFailed, "DeadlineExceeded: Job was active longer than specified deadline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			o := owner("store")
			job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: action.JobName("store", "backup", "3"),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "store", UID: o.UID, Controller: ptr.To(true)}}}, Status: tt.status}
			objs := []client.Object{job}
			for i, p := range tt.pods {
				p.Namespace, p.Name = "ns", job.Name+"-"+string(rune('a'+i))
				p.Labels = map[string]string{batchv1.JobNameLabel: job.Name}
				p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}
				objs = append(objs, p)
			}
			cl := fake.NewClientBuilder().WithScheme(newScheme()).WithObjects(objs...).Build()
			st, err := (&action.Runner{Client: cl, Scheme: newScheme()}).Run(ctx, o, backup(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if st.Phase != tt.phase || st.Message != tt.message {
				t.Errorf("phase %s message %q, want %s %q", st.Phase, st.Message, tt.phase, tt.message)
			}
			if st.Finished() != (tt.phase == kitapi.ActionSucceeded || tt.phase == kitapi.ActionFailed) || (st.Finished() && st.CompletionTime == nil) {
				t.Errorf("finished %v, completion %v", st.Finished(), st.CompletionTime)
			}
		})
	}
}

func TestFinishedRunIsKept(t *testing.T) {
	cl := fake.NewClientBuilder().WithScheme(newScheme()).Build()
	last := kitapi.ActionStatus{Name: "backup", Key: "3", Job: "gone", Phase: kitapi.ActionSucceeded}
	st, err := (&action.Runner{Client: cl, Scheme: newScheme()}).Run(context.Background(), owner("store"), backup(), &last)
	if err != nil || st != last {
		t.Fatalf("a finished run whose Job is gone: %+v, %v; want it kept as it was", st, err)
	}
	var jobs batchv1.JobList
	if err := cl.List(context.Background(), &jobs); err != nil || len(jobs.Items) != 0 {
		t.Errorf("a finished run was started again: %d Jobs", len(jobs.Items))
	}
}

func TestJobOfSomeoneElse(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: action.JobName("store", "backup", "3")}}
	cl := fake.NewClientBuilder().WithScheme(newScheme()).WithObjects(job).Build()
	_, err := (&action.Runner{Client: cl, Scheme: newScheme()}).Run(context.Background(), owner("store"), backup(), nil)
	if err == nil || !strings.Contains(err.Error(), "is not store's") {
		t.Errorf("a Job of that name not owned by the resource: %v, want a refusal", err)
	}
}

func TestCondition(t *testing.T) {
	tests := []struct {
		phase kitapi.ActionPhase
		want  metav1.ConditionStatus
	}{{kitapi.ActionPending, metav1.ConditionUnknown}, {kitapi.ActionRunning, metav1.ConditionUnknown}, {kitapi.ActionSucceeded, metav1.ConditionTrue}, {kitapi.ActionFailed, metav1.ConditionFalse}}
	for _, tt := range tests {
		c := action.Condition(kitapi.ActionStatus{Name: "point-in-time-restore", Job: "j", Phase: tt.phase}, 4)
		if c.Type != "PointInTimeRestoreSucceeded" || c.Status != tt.want || c.Reason != string(tt.phase) || c.ObservedGeneration != 4 || c.Message == "" {
			t.Errorf("%s: %+v", tt.phase, c)
		}
	}
}
