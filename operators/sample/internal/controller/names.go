package controller

import (
	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
)

// FieldManager is the server-side apply manager of this operator.
const FieldManager = "kvstore-operator"

// LegacyFieldManager wrote the objects of operator builds before 0.2, with
// client-side updates and the legacy label scheme. Its fields are taken
// over so that the legacy labels are removed.
const LegacyFieldManager = "kvstore-controller"

// LegacyLabels were set by operator builds before 0.2.
var LegacyLabels = []string{"app", "kvstore.opctl.dev/name"}

const (
	valkeyPort   = 6379
	passwordKey  = "password"
	configFile   = "valkey.conf"
	configSumKey = "kv.opctl.dev/config-sha256"
)

// names of the objects a KVStore owns.
type names struct{ sa, config, secret, headless, client, sts, pdb string }

func namesOf(k *kvv1.KVStore) names {
	return names{
		sa:       k.Name,
		config:   k.Name + "-config",
		secret:   k.Name + "-auth",
		headless: k.Name + "-headless",
		client:   k.Name,
		sts:      k.Name,
		pdb:      k.Name,
	}
}

// selectorLabels select a KVStore's pods. They never change: a
// StatefulSet's selector is immutable.
func selectorLabels(k *kvv1.KVStore) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":     "kvstore",
		"app.kubernetes.io/instance": k.Name,
	}
}

// commonLabels are set on every object a KVStore owns.
func commonLabels(k *kvv1.KVStore) map[string]string {
	l := selectorLabels(k)
	l["app.kubernetes.io/managed-by"] = FieldManager
	l["app.kubernetes.io/part-of"] = "kvstore"
	return l
}
