package operatorkit

import (
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ReasonError attaches a condition reason to an error.
type ReasonError struct {
	Reason string
	Err    error
}

func (e *ReasonError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *ReasonError) Unwrap() error { return e.Err }

// WithReason marks err with a condition reason; it is still retried.
func WithReason(reason string, err error) error {
	return &ReasonError{Reason: reason, Err: err}
}

// Terminal marks err as not retryable: the reconciler stops retrying and
// reports Degraded and Stalled with reason until the object changes.
func Terminal(reason string, err error) error {
	return reconcile.TerminalError(&ReasonError{Reason: reason, Err: err})
}

// IsTerminal reports whether err was marked with Terminal or
// reconcile.TerminalError.
func IsTerminal(err error) bool {
	return errors.Is(err, reconcile.TerminalError(nil))
}

// reasonOf returns the reason attached to err, or fallback.
func reasonOf(err error, fallback string) string {
	var re *ReasonError
	if errors.As(err, &re) && re.Reason != "" {
		return re.Reason
	}
	return fallback
}

// ConflictError reports a managed object that exists but cannot be taken
// over: it has another controller, or adoption is not allowed.
type ConflictError struct {
	Kind, Namespace, Name string
	Why                   string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s %s/%s already exists and %s", e.Kind, e.Namespace, e.Name, e.Why)
}
