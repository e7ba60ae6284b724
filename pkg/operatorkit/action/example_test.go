package action_test

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"opctl.dev/opctl/pkg/operatorkit/action"
	"opctl.dev/opctl/pkg/operatorkit/kitapi"
)

// A backup started from one reconcile and observed from the next ones. In
// an operator, the status lives in the custom resource's status and each
// change of the Job brings a reconcile; here the Job controller's work is
// done by hand.
func ExampleRunner() {
	ctx := context.Background()
	cl := fake.NewClientBuilder().WithScheme(newScheme()).Build()
	r := &action.Runner{Client: cl, Scheme: newScheme()}
	store := owner("store")
	backup := action.Action{Name: "backup", Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "backup", Image: "kv:1", Args: []string{"backup", "--to", "s3://backups"}}}}}}

	var status *kitapi.ActionStatus // from the resource's status
	for reconcile := 1; reconcile <= 3; reconcile++ {
		st, err := r.Run(ctx, store, backup, status)
		if err != nil {
			fmt.Println(err)
			return
		}
		status = &st
		fmt.Printf("reconcile %d: %s %s\n", reconcile, st.Phase, action.Condition(st, store.Generation).Type)
		if reconcile == 2 { // the Job controller reports the pod's success
			job := &batchv1.Job{}
			_ = cl.Get(ctx, client.ObjectKey{Namespace: "ns", Name: st.Job}, job)
			job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
			_ = cl.Status().Update(ctx, job)
		}
	}
	// Output:
	// reconcile 1: Pending BackupSucceeded
	// reconcile 2: Pending BackupSucceeded
	// reconcile 3: Succeeded BackupSucceeded
}
