// Package kitapi holds the API types that custom resources reconciled by
// operatorkit embed: the deletion policy and the status with its phase and
// conditions. It imports only apimachinery's meta types and the pure
// lifecycle package, so an API package that embeds them stays light;
// operatorkit re-exports them under the same names.
package kitapi
