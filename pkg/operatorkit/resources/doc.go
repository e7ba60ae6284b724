// Package resources has helpers for the kinds operators manage most, for
// use in operatorkit Resources: how many replicas of a Deployment or
// StatefulSet are ready, running and updated and whether the current spec
// has fully rolled out; whether a Service has its address; a hash of a
// ConfigMap's data to roll pods when it changes; generated Secret data
// (kept once created by the Registry's initial-data rule); and the growth
// of a PersistentVolumeClaim, which may expand but never shrink.
package resources
