package cli

import "strconv"

// ExitError carries a specific process exit code. With a nil Err nothing is
// printed, for commands that have already reported (validate findings, say).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return "exit status " + strconv.Itoa(e.Code)
	}
	return e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *ExitError) Unwrap() error { return e.Err }
