package tenancy

// For the external tests and benchmarks.
var (
	QuotaCounted = quotaCounted
	RolledOut    = rolledOut
)
