package controller

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/operators/sample/internal/instance"
	"opctl.dev/opctl/pkg/operatorkit"
)

// DataPath is how the operator reaches the servers of its stores.
type DataPath struct {
	// Manager reads and steers a server: instance.RESP.
	Manager instance.Manager
	// Address is host:port of a pod's server, which is also how the other
	// pods reach it. Nil is the pod's name behind the headless Service.
	Address func(k *kvv1.KVStore, pod string) string
	// Poll is how often a store's servers are read; zero is 10 seconds.
	Poll time.Duration
	// LinkGrace is how long a replica's link to the primary may be down
	// before it is resynchronized; zero is 10 seconds.
	LinkGrace time.Duration
}

// failoverAfterDefault applies when spec.failover.after is not set.
const failoverAfterDefault = 30 * time.Second

func (d *DataPath) poll() time.Duration { return cmp.Or(d.Poll, 10*time.Second) }

func (d *DataPath) grace() time.Duration { return cmp.Or(d.LinkGrace, 10*time.Second) }

func (d *DataPath) addr(k *kvv1.KVStore, pod string) string { return serverAddr(d.Address, k, pod) }

// serverAddr is host:port of a pod's server: from address, or the pod's
// name behind the headless Service.
func serverAddr(address func(*kvv1.KVStore, string) string, k *kvv1.KVStore, pod string) string {
	if address != nil {
		return address(k, pod)
	}
	return net.JoinHostPort(fmt.Sprintf("%s.%s.%s.svc", pod, namesOf(k).headless, k.Namespace), strconv.Itoa(valkeyPort))
}

// servers is what one reconcile read of a store's servers.
type servers struct {
	dp       *DataPath
	k        *kvv1.KVStore
	password string
	status   map[string]instance.Status
	errs     map[string]error
}

func (s *servers) target(pod string) instance.Target {
	return instance.Target{Addr: s.dp.addr(s.k, pod), Password: s.password}
}

// read reads every pod's server.
func (s *servers) read(ctx context.Context, pods []corev1.Pod) {
	s.status, s.errs = map[string]instance.Status{}, map[string]error{}
	for _, p := range pods {
		st, err := s.dp.Manager.Status(ctx, s.target(p.Name))
		if err != nil {
			s.errs[p.Name] = err
			continue
		}
		s.status[p.Name] = st
	}
}

// reconcileServers steers the servers: it fails over when the primary has
// been lost for spec.failover.after, promotes back a primary that came up
// as a replica, repoints or resynchronizes replicas, and autoscales.
func (h *Handler) reconcileServers(ctx context.Context, k *kvv1.KVStore, pods []corev1.Pod) error {
	password, err := h.password(ctx, k.Namespace, namesOf(k).secret)
	if err != nil {
		return err
	}
	s := &servers{dp: h.DataPath, k: k, password: string(password)}
	s.read(ctx, pods)
	h.setProblem(k, nil)
	primary := primaryOf(k)
	if _, up := s.status[primary]; !up {
		if len(pods) < 2 {
			return nil // no replica to fail over to
		}
		if primary = h.failover(ctx, k, s); primary == "" {
			return nil // waiting, or blocked: Status reports it
		}
	} else {
		h.lost.Delete(storeKey(k))
		if k.Status.Failover != nil {
			k.Status.Failover.PrimaryLostSince = nil
		}
	}
	if st, ok := s.status[primary]; ok && !st.Primary() {
		// A primary restarted with a stale startup file follows someone.
		if err := s.dp.Manager.Promote(ctx, s.target(primary)); err != nil {
			return err
		}
		h.event(k, nil, "PrimaryPromoted", "Promoted %s back to primary: it came up as a replica", primary)
	}
	if err := h.follow(ctx, k, s, primary); err != nil {
		return err
	}
	h.autoscale(k, s)
	return nil
}

// failover promotes the most advanced replica once the primary has been
// unreachable for spec.failover.after, and returns the primary then, or ""
// while it waits or cannot choose.
func (h *Handler) failover(ctx context.Context, k *kvv1.KVStore, s *servers) string {
	old := primaryOf(k)
	fs := k.Status.Failover
	if fs == nil {
		fs = &kvv1.FailoverStatus{}
		k.Status.Failover = fs
	}
	// The outage is timed in memory, from the first failed read of an
	// unbroken run: status, read from the cache, may not show yet that an
	// earlier blip ended. A restarted operator starts the clock again.
	now := h.now()
	first, seen := h.lost.LoadOrStore(storeKey(k), now)
	since := first.(time.Time)
	if !seen {
		h.warn(k, "PrimaryLost", "Primary %s is unreachable: %v", old, s.errs[old])
	}
	if reported := since.Truncate(time.Second); fs.PrimaryLostSince == nil || !fs.PrimaryLostSince.Time.Equal(reported) {
		fs.PrimaryLostSince = &metav1.Time{Time: reported}
	}
	after := failoverAfterDefault
	if k.Spec.Failover.After != nil {
		after = k.Spec.Failover.After.Duration
	}
	if now.Sub(since) < after {
		return ""
	}
	var cands []instance.Candidate
	for name, st := range s.status {
		cands = append(cands, instance.Candidate{Name: name, Status: st})
	}
	for name, err := range s.errs {
		if name != old {
			cands = append(cands, instance.Candidate{Name: name, Err: err})
		}
	}
	chosen, err := instance.ChoosePrimary(cands)
	if err == nil {
		err = s.dp.Manager.Promote(ctx, s.target(chosen))
	}
	if err != nil {
		h.setProblem(k, &operatorkit.Problem{Reason: ReasonFailoverBlocked, Message: fmt.Sprintf(
			"primary %s lost since %s and no replica can be promoted: %v", old, fs.PrimaryLostSince.UTC().Format(time.RFC3339), err)})
		return ""
	}
	promoted := s.status[chosen]
	promoted.Role = "master"
	s.status[chosen] = promoted
	h.lost.Delete(storeKey(k))
	fs.Count++
	fs.LastTime, fs.From, fs.To, fs.PrimaryLostSince = &metav1.Time{Time: now}, old, chosen, nil
	k.Status.Primary = chosen
	failovers.WithLabelValues(k.Namespace, k.Name).Inc()
	h.warn(k, "FailedOver", "Promoted %s (replication offset %d) after primary %s was lost for %s",
		chosen, s.status[chosen].Offset, old, after)
	return chosen
}

// follow points every replica that answers at the primary, and restarts
// the replication of one whose link has been down past the grace.
func (h *Handler) follow(ctx context.Context, k *kvv1.KVStore, s *servers, primary string) error {
	host, port, err := net.SplitHostPort(s.dp.addr(k, primary))
	if err != nil {
		return fmt.Errorf("address of %s: %w", primary, err)
	}
	p, _ := strconv.Atoi(port)
	for name, st := range s.status {
		if name == primary {
			continue
		}
		elsewhere := st.Primary() || st.MasterHost != host || st.MasterPort != p
		stuck := !elsewhere && !st.LinkUp && !st.SyncInProgress && time.Duration(st.LinkDownSeconds)*time.Second >= s.dp.grace()
		if !elsewhere && !stuck {
			continue
		}
		if err := s.dp.Manager.Follow(ctx, s.target(name), host, p); err != nil {
			return err
		}
		if stuck {
			h.warn(k, "ReplicaResynced", "Replica %s was out of sync for %ds; restarted its replication from %s", name, st.LinkDownSeconds, primary)
		} else {
			h.event(k, nil, "ReplicaRepointed", "Pointed %s at primary %s", name, primary)
		}
	}
	return nil
}

// autoscale sets status.replicas from the load the servers report.
func (h *Handler) autoscale(k *kvv1.KVStore, s *servers) {
	a := k.Spec.Autoscaling
	if a == nil {
		return
	}
	var ops int64
	for _, st := range s.status {
		ops += st.OpsPerSecond
	}
	as := k.Status.Autoscaling
	if as == nil {
		as = &kvv1.AutoscalingStatus{}
	}
	var last time.Time
	if as.LastScaleTime != nil {
		last = as.LastScaleTime.Time
	}
	current := replicasOf(k)
	d := instance.Autoscale(instance.ScalePolicy{Min: a.MinReplicas, Max: a.MaxReplicas, Target: a.TargetOpsPerSecond,
		Cooldown: time.Duration(a.CooldownSeconds) * time.Second}, current, ops, last, h.now())
	if d.Replicas == current {
		return
	}
	k.Status.Replicas = d.Replicas
	as.LastScaleTime, as.OpsPerSecond, as.Reason = &metav1.Time{Time: h.now()}, ops, d.Reason
	k.Status.Autoscaling = as
	h.event(k, nil, "Autoscaled", "Scaled from %d to %d pods: %s", current, d.Replicas, d.Reason)
}

func storeKey(k *kvv1.KVStore) string { return k.Namespace + "/" + k.Name }

func (h *Handler) setProblem(k *kvv1.KVStore, p *operatorkit.Problem) {
	key := storeKey(k)
	if p == nil {
		h.problems.Delete(key)
		return
	}
	h.problems.Store(key, p)
}

func (h *Handler) problem(k *kvv1.KVStore) *operatorkit.Problem {
	p, _ := h.problems.Load(storeKey(k))
	prob, _ := p.(*operatorkit.Problem)
	return prob
}

// lostSince is when the store's primary was first found unreachable in
// the current outage, if it is in one.
func (h *Handler) lostSince(k *kvv1.KVStore) (time.Time, bool) {
	v, ok := h.lost.Load(storeKey(k))
	if !ok {
		return time.Time{}, false
	}
	return v.(time.Time), true
}
