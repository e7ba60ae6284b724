// Package test checks the memcached operator as a whole: that opctl kit
// regenerates it byte for byte, and that opctl package and validate
// accept it.
package test
