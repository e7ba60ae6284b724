package operatorkit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"opctl.dev/opctl/pkg/operatorkit/lifecycle"
)

// Finalizer is set on every reconciled object so that deletion can apply
// its deletion policy first.
const Finalizer = "operatorkit.opctl.dev/cleanup"

// PausedAnnotation, set to "true" on an object, stops its reconciles.
const PausedAnnotation = "operatorkit.opctl.dev/paused"

// Reconciler reconciles objects of type T through a Handler. Build one with
// New and register it with SetupWithManager.
type Reconciler[T Object] struct {
	client    client.Client
	scheme    *runtime.Scheme
	recorder  events.EventRecorder
	handler   Handler[T]
	newObject func() T
	machine   *lifecycle.Machine
	applier   *Applier
	kind      string
	workers   int
	leader    *bool
	stale     staleVersions
}

// Options tune a Reconciler. The zero value is usable.
type Options struct {
	// FieldManager for server-side apply; default "operatorkit-<name>".
	FieldManager string
	// LegacyFieldManagers whose fields are taken over (see Applier).
	LegacyFieldManagers []string
	// MaxCreates bounds objects created per reconcile; zero is unbounded.
	MaxCreates int
	// Lifecycle is the phase graph; default lifecycle.Standard().
	Lifecycle *lifecycle.Machine
	// MaxConcurrentReconciles; default 1.
	MaxConcurrentReconciles int
	// LiveReader reads objects the cache cannot see (see Applier).
	LiveReader client.Reader
	// AggregateEvents: one Event per apply, not per object (see Applier).
	AggregateEvents bool
	// NeedLeaderElection: false runs the controller in every replica (a
	// sharded controller); default true.
	NeedLeaderElection *bool
}

// New returns a Reconciler named name for the objects newObject makes.
func New[T Object](mgr ctrl.Manager, name string, newObject func() T, h Handler[T], opts Options) *Reconciler[T] {
	if opts.FieldManager == "" {
		opts.FieldManager = "operatorkit-" + name
	}
	if opts.Lifecycle == nil {
		opts.Lifecycle = lifecycle.Standard()
	}
	if l, ok := h.(interface{ MaxCreates() int }); ok && opts.MaxCreates == 0 {
		opts.MaxCreates = l.MaxCreates()
	}
	rec := mgr.GetEventRecorder(name)
	r := &Reconciler[T]{
		client:    mgr.GetClient(),
		scheme:    mgr.GetScheme(),
		recorder:  rec,
		handler:   h,
		newObject: newObject,
		machine:   opts.Lifecycle,
		applier: &Applier{
			Client: mgr.GetClient(), Scheme: mgr.GetScheme(), FieldManager: opts.FieldManager,
			Recorder: rec, LegacyFieldManagers: opts.LegacyFieldManagers, MaxCreates: opts.MaxCreates,
			LiveReader: opts.LiveReader, AggregateEvents: opts.AggregateEvents,
		},
	}
	r.kind = kindOf(r.scheme, newObject())
	r.workers = max(1, opts.MaxConcurrentReconciles)
	r.leader = opts.NeedLeaderElection
	return r
}

// SetupWithManager watches T and the owned types.
func (r *Reconciler[T]) SetupWithManager(mgr ctrl.Manager, owns ...client.Object) error {
	return r.Builder(mgr, owns...).Complete(r)
}

// Builder returns the controller builder SetupWithManager completes, for
// callers that add watches of their own before calling Complete(r).
func (r *Reconciler[T]) Builder(mgr ctrl.Manager, owns ...client.Object) *builder.Builder {
	b := ctrl.NewControllerManagedBy(mgr).For(r.newObject()).Named(r.applier.FieldManager).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.workers, NeedLeaderElection: r.leader})
	for _, o := range owns {
		b = b.Owns(o)
	}
	return b
}

// Reconcile fetches the object, branches to deletion, and otherwise runs
// the reconcile steps. The status is patched at the end, only if it
// changed.
func (r *Reconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, err error) {
	logger := log.FromContext(ctx).WithValues("kind", r.kind)
	ctx = withScopeSlot(log.IntoContext(ctx, logger))

	logger.V(1).Info("step", "step", "fetch")
	obj := r.newObject()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.stale.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if r.stale.behind(req.NamespacedName, obj.GetResourceVersion()) {
		// The watch event of that write is on its way; the requeue is a
		// backstop.
		logger.V(1).Info("cache behind this controller's last write; waiting for it", "resourceVersion", obj.GetResourceVersion())
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	if p, ok := any(obj).(Pausable); obj.GetAnnotations()[PausedAnnotation] == "true" || (ok && p.KitPaused()) {
		logger.V(1).Info("paused")
		return ctrl.Result{}, nil
	}
	before := obj.DeepCopyObject().(T)
	// passed are the versions this reconcile wrote past.
	var passed []string
	wrote := func(rv string) {
		if rv != obj.GetResourceVersion() {
			passed = append(passed, rv)
		}
	}
	defer func() {
		rv := obj.GetResourceVersion()
		if perr := r.patchStatus(ctx, before, obj); perr != nil {
			err = errors.Join(err, perr)
		}
		err = bound(err) // controller-runtime logs it
		wrote(rv)
		r.stale.wrote(req.NamespacedName, passed)
	}()

	if !obj.GetDeletionTimestamp().IsZero() {
		if res, err = r.finalize(ctx, obj); err != nil {
			r.fail(ctx, obj, err)
		}
		return res, err
	}
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		patch := client.MergeFrom(obj.DeepCopyObject().(T))
		controllerutil.AddFinalizer(obj, Finalizer)
		rv := obj.GetResourceVersion()
		if err := r.client.Patch(ctx, obj, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
		wrote(rv)
		before = obj.DeepCopyObject().(T)
	}
	res, err = r.reconcile(ctx, obj)
	if err != nil {
		r.fail(ctx, obj, err)
	}
	return res, err
}

// reconcile runs check, build, mutate, apply and status.
func (r *Reconciler[T]) reconcile(ctx context.Context, obj T) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	step := func(name string) { logger.V(1).Info("step", "step", name) }

	step("check")
	if err := r.handler.Check(ctx, obj); err != nil {
		return ctrl.Result{}, fmt.Errorf("check: %w", err)
	}
	step("build")
	objs, err := r.handler.Build(ctx, obj)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("build: %w", err)
	}
	step("mutate")
	if err := r.handler.Mutate(ctx, obj, objs); err != nil {
		return ctrl.Result{}, fmt.Errorf("mutate: %w", err)
	}
	step("apply")
	results, err := r.applier.Apply(ctx, obj, objs, obj.KitAdoptionAllowed())
	if err != nil {
		var conflict *ConflictError
		if errors.As(err, &conflict) {
			err = WithReason(ReasonOwnershipConflict, err)
		}
		return ctrl.Result{}, fmt.Errorf("apply: %w", err)
	}
	if rep, ok := r.handler.(Repairer[T]); ok {
		step("repair")
		if err := rep.Repair(ctx, obj, results); err != nil {
			return ctrl.Result{}, fmt.Errorf("repair: %w", err)
		}
	}
	step("status")
	o, err := r.handler.Status(ctx, obj, results)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("status: %w", err)
	}
	deferred := false
	for _, res := range results {
		if res.Outcome == Deferred {
			deferred = true
		}
	}
	if deferred {
		o.Ready, o.Progressing = false, true
		if o.Message == "" {
			o.Message = "creating managed objects in batches"
		}
	}
	step("success")
	st := obj.KitStatus()
	applyObservation(st, o, obj.GetGeneration())
	r.transition(ctx, obj, lifecycle.Facts{Available: o.Available, Progressing: o.Progressing, Stalled: o.Degraded != nil && o.Degraded.Stalled,
		Wished: wishOf(obj), Gone: o.Stopped}, o.RequestPhase)
	st.ObservedGeneration = obj.GetGeneration()
	if deferred {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	return ctrl.Result{RequeueAfter: o.RequeueAfter}, nil
}

// fail records err in the conditions: Degraded with its reason, and Stalled
// when it is terminal.
func (r *Reconciler[T]) fail(ctx context.Context, obj T, err error) {
	err = bound(err)
	terminal := IsTerminal(err)
	reason := reasonOf(err, ReasonReconcileFailed)
	st, gen := obj.KitStatus(), obj.GetGeneration()
	setCondition(st, ConditionDegraded, metav1.ConditionTrue, reason, err.Error(), gen)
	setAbnormal(st, ConditionStalled, terminal, reason, err.Error(), gen)
	if terminal {
		setCondition(st, ConditionReady, metav1.ConditionFalse, reason, err.Error(), gen)
		setAbnormal(st, ConditionReconciling, false, "", "", gen)
		setCondition(st, ConditionProgressing, metav1.ConditionFalse, reason, "", gen)
		st.ObservedGeneration = gen
		// Nothing was applied: what served before still serves.
		serving := st.Phase == lifecycle.Running || st.Phase == lifecycle.Servicing
		r.transition(ctx, obj, lifecycle.Facts{Stalled: true, Available: serving}, "")
	} else {
		setAbnormal(st, ConditionReconciling, true, ReasonRetrying, err.Error(), gen)
	}
	if r.recorder != nil {
		r.recorder.Eventf(obj, nil, "Warning", reason, "Reconcile", "%v", err)
	}
	log.FromContext(ctx).Error(err, "reconcile failed", "terminal", terminal, "reason", reason)
}

// transition moves the lifecycle phase from the facts, or to the requested
// phase, and records the Lifecycle condition.
func (r *Reconciler[T]) transition(ctx context.Context, obj T, f lifecycle.Facts, request string) {
	st, gen := obj.KitStatus(), obj.GetGeneration()
	from := st.Phase
	if from == "" {
		from = r.machine.Initial()
	}
	to, waiting := r.machine.Next(from, f)
	if request != "" {
		ok, why, err := r.machine.Request(from, lifecycle.Phase(request), f)
		if err != nil {
			st.Phase = from
			setCondition(st, ConditionLifecycle, metav1.ConditionFalse, ReasonTransitionRefused, err.Error(), gen)
			transitionsTotal.WithLabelValues(r.kind, string(from), request, "refused").Inc()
			if r.recorder != nil {
				r.recorder.Eventf(obj, nil, "Warning", ReasonTransitionRefused, "Transition", "%v", err)
			}
			return
		}
		to, waiting = from, why
		if ok {
			to = lifecycle.Phase(request)
		}
	}
	st.Phase = to
	if to != from {
		// Say at once what the new phase waits for, so that the next
		// reconcile of an unchanged object finds nothing to write.
		if next, w := r.machine.Next(to, f); next == to {
			waiting = w
		} else {
			waiting = ""
		}
	}
	msg := ""
	if waiting != "" {
		msg = "waiting for " + waiting
	}
	if f.Wished != "" && f.Wished != to {
		msg = wishMessage(r.machine, to, f.Wished, waiting)
	}
	setCondition(st, ConditionLifecycle, metav1.ConditionTrue, string(to), msg, gen)
	if to != from {
		transitionsTotal.WithLabelValues(r.kind, string(from), string(to), "ok").Inc()
		if r.recorder != nil {
			r.recorder.Eventf(obj, nil, "Normal", "PhaseChanged", "Transition", "%s → %s", from, to)
		}
		log.FromContext(ctx).Info("lifecycle transition", "from", from, "to", to)
	}
}

// patchStatus writes the status subresource when it changed.
func (r *Reconciler[T]) patchStatus(ctx context.Context, before, after T) error {
	if !after.GetDeletionTimestamp().IsZero() && !controllerutil.ContainsFinalizer(after, Finalizer) {
		return nil // released: the object is going away
	}
	b, err := runtime.DefaultUnstructuredConverter.ToUnstructured(before)
	if err != nil {
		return err
	}
	a, err := runtime.DefaultUnstructuredConverter.ToUnstructured(after)
	if err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(b["status"], a["status"]) {
		return nil
	}
	if err := r.client.Status().Patch(ctx, after, client.MergeFrom(before)); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("patching status: %w", err)
	}
	logr.FromContextOrDiscard(ctx).V(1).Info("status written", "phase", after.KitStatus().Phase)
	return nil
}

// wishOf is the phase obj's user wishes for, if any.
func wishOf(obj Object) lifecycle.Phase {
	if w, ok := obj.(Wisher); ok {
		return w.KitWish()
	}
	return ""
}

// wishMessage says why the phase is not the wished one yet.
func wishMessage(m *lifecycle.Machine, at, wished lifecycle.Phase, waiting string) string {
	if !slices.Contains(m.Allowed(at), wished) && waiting == "" {
		return fmt.Sprintf("wished %s, which %s cannot reach", wished, at)
	}
	if waiting == "" {
		waiting = "its guard"
	}
	return fmt.Sprintf("wished %s: waiting for %s", wished, waiting)
}
