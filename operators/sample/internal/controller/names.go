package controller

import (
	"strconv"
	"strings"

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
	exporterPort = 9121
	passwordKey  = "password"
	configFile   = "valkey.conf"
	primaryFile  = "primary"
	configSumKey = "kv.opctl.dev/config-sha256"
	// RoleLabel marks each pod primary or replica; the client Service
	// selects the primary, the read-only Service the replicas.
	RoleLabel = "kv.opctl.dev/role"
	// StoreLabel names the KVStore of a KVBackup.
	StoreLabel = "kv.opctl.dev/store"
)

// The roles of a pod.
const (
	RolePrimary = "primary"
	RoleReplica = "replica"
)

// names of the objects a KVStore owns.
type names struct{ sa, config, secret, headless, client, readOnly, sts, pdb string }

func namesOf(k *kvv1.KVStore) names {
	return names{
		sa:       k.Name,
		config:   k.Name + "-config",
		secret:   k.Name + "-auth",
		headless: k.Name + "-headless",
		client:   k.Name,
		readOnly: k.Name + "-ro",
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

// roleLabels select the pods of one role.
func roleLabels(k *kvv1.KVStore, role string) map[string]string {
	l := selectorLabels(k)
	l[RoleLabel] = role
	return l
}

// primaryOf is the pod that takes writes: status.primary, else the first.
func primaryOf(k *kvv1.KVStore) string {
	if k.Status.Primary != "" {
		return k.Status.Primary
	}
	return namesOf(k).sts + "-0"
}

// ordinal is a StatefulSet pod's index, or -1.
func ordinal(k *kvv1.KVStore, pod string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(pod, namesOf(k).sts+"-"))
	if err != nil || !strings.HasPrefix(pod, namesOf(k).sts+"-") {
		return -1
	}
	return n
}
