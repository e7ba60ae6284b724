package operatorkit

import (
	"fmt"
	"unicode/utf8"
)

// MaxMessage bounds what the kit, and a controller built on it, writes
// from one error into a status condition, an Event or a log line: errors
// quote text from whoever can write the objects involved (Helm's "cannot
// be imported" lists an object's annotations), and they must not fill
// the object, etcd or the logs through them. An Event's message may hold
// 1024 characters, and client-go's event aggregation prefixes "(combined
// from similar events): " to a repeated one: the bound leaves room for it,
// or the API server would refuse the Event.
const MaxMessage = 1024 - 64

// BoundText returns s cut to MaxMessage bytes at a rune boundary, saying
// how much was cut.
func BoundText(s string) string {
	if len(s) <= MaxMessage {
		return s
	}
	suffix := fmt.Sprintf("… (%d bytes cut)", len(s))
	cut := MaxMessage - len(suffix)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + suffix
}

// boundedError is an error whose text is cut to MaxMessage; errors.Is and
// errors.As still see the error it wraps.
type boundedError struct{ err error }

func (e boundedError) Error() string { return BoundText(e.err.Error()) }
func (e boundedError) Unwrap() error { return e.err }

// bound returns err with its text bounded, or nil.
func bound(err error) error {
	if err == nil || len(err.Error()) <= MaxMessage {
		return err
	}
	return boundedError{err}
}
