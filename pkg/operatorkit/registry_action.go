package operatorkit

import (
	"context"
	"fmt"

	"opctl.dev/opctl/pkg/operatorkit/action"
	"opctl.dev/opctl/pkg/operatorkit/kitapi"
)

// JobResource is a long action of a Registry (a backup, a migration) run
// as a Job through package action: started by one reconcile, observed by
// the next ones, never applied like the other resources.
type JobResource[T Object] interface {
	// Action returns the action owner wants now, with the status kept from
	// the last reconcile (nil for none); ok is false when none is wanted.
	Action(owner T) (a action.Action, last *kitapi.ActionStatus, ok bool)
	// Record keeps the action's status in owner's status.
	Record(owner T, st kitapi.ActionStatus)
}

// WithJobs adds long actions to the registry. Watch Jobs (Owns) so that
// each step of theirs brings a reconcile.
func (r *Registry[T]) WithJobs(jobs ...JobResource[T]) *Registry[T] {
	r.jobs = append(r.jobs, jobs...)
	return r
}

// runJobs runs the wanted actions; one that has not finished makes the
// owner Progressing (its lifecycle goes to Servicing), a failed one
// Degraded.
func (r *Registry[T]) runJobs(ctx context.Context, obj T, o *Observation) error {
	if len(r.jobs) == 0 {
		return nil
	}
	runner := &action.Runner{Client: r.client, Scheme: r.client.Scheme()}
	for _, j := range r.jobs {
		a, last, ok := j.Action(obj)
		if !ok {
			continue
		}
		st, err := runner.Run(ctx, obj, a, last)
		if err != nil {
			return fmt.Errorf("action %s: %w", a.Name, err)
		}
		j.Record(obj, st)
		switch {
		case !st.Finished():
			o.Progressing = true
			o.Message = fmt.Sprintf("%s %s is %s", st.Name, st.Key, st.Phase)
		case st.Phase == kitapi.ActionFailed && o.Degraded == nil:
			o.Degraded = &Problem{Reason: "ActionFailed", Message: fmt.Sprintf("%s %s failed: %s", st.Name, st.Key, st.Message)}
		}
	}
	return nil
}
