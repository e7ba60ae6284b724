package tenancy

import (
	"fmt"
	"unicode/utf8"
)

// maxMessage bounds what the controller writes into a Tenant's status or
// an Event from one error: errors quote tenant-controlled text (Helm's
// "cannot be imported" lists an object's annotations), and a tenant must
// not fill the Tenant object or etcd through them. An Event's message
// may hold 1024 characters, and client-go's event aggregation prefixes
// "(combined from similar events): " to a repeated one: the bound leaves
// room for it, or the API server would refuse the Event.
const maxMessage = 1024 - 64

// boundText returns s cut to maxMessage bytes at a rune boundary, saying
// how much was cut.
func boundText(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	suffix := fmt.Sprintf("… (%d bytes cut)", len(s))
	cut := maxMessage - len(suffix)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + suffix
}
