// Package alerts checks the controller's Prometheus alerts with the real
// promtool: the rules parse (promtool check rules) and every alert fires
// and stays quiet when it should (promtool test rules).
package alerts
