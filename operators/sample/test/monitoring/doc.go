// Package monitoring checks the KVStore operator's monitoring with real
// engines: promtool checks and unit-tests every alert of
// config/prometheus, and a real Prometheus scrapes real redis_exporters in
// front of real redis-servers (a primary and a replica), where every
// operand metric the alerts and the Grafana dashboard use must be present;
// the operator's own metrics they use must be ones it registers.
package monitoring
