// Package action runs the long actions of an operator (a backup, a
// restore, a failover) as Kubernetes Jobs, started from one reconcile and
// observed over the following ones: the asynchronous actions of the OKT
// proposal. A reconcile never waits: Runner.Run creates the Job the first
// time, and afterwards reads it and reports its phase (Pending, Running,
// Succeeded, Failed with the pod's termination message) for the resource's
// status, a condition and an Event. The Job is named for the resource, the
// action and a key (the generation, a request's name), so a run is started
// once however often Run is called; a finished run is kept in the status,
// so it is not started again once its Job is gone.
//
// The Job controller does the rest, with no goroutine in the operator:
// Action.Deadline is the Job's activeDeadlineSeconds, Action.Retries its
// backoffLimit (retries with exponential backoff), and Action.TTL its
// ttlSecondsAfterFinished (the TTL controller deletes the finished Job).
// The Job is owned by the resource: watch Jobs (Reconciler.Builder with
// Owns(&batchv1.Job{})) and each change of its status brings a reconcile.
package action
