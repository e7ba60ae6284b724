package resources

import (
	appsv1 "k8s.io/api/apps/v1"
)

// Readiness summarises a workload's rollout.
type Readiness struct {
	// Desired is spec.replicas (1 when unset).
	Desired int32
	// Ready and Available count pods of any revision.
	Ready, Available int32
	// Updated counts pods of the current revision.
	Updated int32
	// Observed: the controller has seen the current generation.
	Observed bool
}

// RolledOut reports whether every desired replica runs the current
// revision, is ready, and no old pods remain.
func (r Readiness) RolledOut() bool {
	return r.Observed && r.Updated == r.Desired && r.Ready == r.Desired && r.Available == r.Desired
}

// AnyAvailable reports whether at least one replica serves.
func (r Readiness) AnyAvailable() bool { return r.Available > 0 }

func desired(replicas *int32) int32 {
	if replicas == nil {
		return 1
	}
	return *replicas
}

// Deployment returns the readiness of d.
func Deployment(d *appsv1.Deployment) Readiness {
	return Readiness{
		Desired:   desired(d.Spec.Replicas),
		Ready:     d.Status.ReadyReplicas,
		Available: d.Status.AvailableReplicas,
		Updated:   d.Status.UpdatedReplicas,
		Observed:  d.Status.ObservedGeneration >= d.Generation && d.Status.Replicas == desired(d.Spec.Replicas),
	}
}

// StatefulSet returns the readiness of s. Its pods are updated when the
// current revision equals the update revision.
func StatefulSet(s *appsv1.StatefulSet) Readiness {
	updated := s.Status.UpdatedReplicas
	if s.Status.CurrentRevision == s.Status.UpdateRevision && s.Status.UpdateRevision != "" {
		updated = s.Status.CurrentReplicas
	}
	return Readiness{
		Desired:   desired(s.Spec.Replicas),
		Ready:     s.Status.ReadyReplicas,
		Available: s.Status.AvailableReplicas,
		Updated:   updated,
		Observed:  s.Status.ObservedGeneration >= s.Generation && s.Status.Replicas == desired(s.Spec.Replicas),
	}
}
