// Package resources has readiness helpers for the workloads operators
// manage: how many replicas of a Deployment or StatefulSet are ready and
// whether the current spec has fully rolled out.
package resources
