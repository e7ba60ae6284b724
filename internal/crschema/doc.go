// Package crschema checks a custom resource against its CRD the way the
// API server does on create: unknown fields pruned, nulls of non-nullable
// fields without a default dropped, defaults applied, then the schema's
// validation. A sample that kubectl can create passes; one it cannot, fails
// with the API server's field errors.
//
// The packager uses it to leave invalid samples out of a CSV's
// alm-examples, and opctl validate to check alm-examples, so both judge a
// sample as the cluster will.
package crschema
