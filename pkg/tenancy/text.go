package tenancy

import (
	"fmt"
	"unicode/utf8"
)

// maxMessage bounds what the controller writes into a Tenant's status or
// an Event from one error: errors quote tenant-controlled text (Helm's
// "cannot be imported" lists an object's annotations), and a tenant must
// not fill the Tenant object or etcd through them.
const maxMessage = 1024

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
