// Package podsecurity judges pod templates against the Pod Security
// Standards with the Pod Security admission plugin's own evaluator
// (k8s.io/pod-security-admission), at its latest policy version: the level
// a pod meets (privileged, baseline or restricted) and, for each stricter
// level, the reasons it is refused, worded as the API server words them.
//
// opctl package records the level of what it ships; the tenancy controller
// can judge a rendered pod before install with the same function, so both
// agree with what the API server will later admit.
package podsecurity
