#!/usr/bin/env bash
# Builds the real test control plane binaries from the Go module proxy into
# bin/k8s/<version>/: kube-apiserver, kube-controller-manager, kube-scheduler,
# kubectl, etcd, kwok (plus its Stage CRD and default stages), helm (3 and
# 4, as helm4), opm, OLM v0 (olm and catalog, plus its CRDs) and the
# Prometheus operator's monitoring CRDs.
# Each component is cached by version in its own stamp file, so bumping one
# version rebuilds only that component.
#
# Usage: hack/testbin.sh [--print-dir]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=versions.env
source "${ROOT}/hack/versions.env"
DEST="${ROOT}/bin/k8s/${K8S_VERSION}"
GOVERSION="$(go env GOVERSION)"

if [[ "${1:-}" == "--print-dir" ]]; then
  echo "${DEST}"
  exit 0
fi

mkdir -p "${DEST}"
WORK="$(mktemp -d)"
trap 'rm -rf "${WORK}"' EXIT
export GOFLAGS="-mod=mod -buildvcs=false"
export CGO_ENABLED=0
log() { echo "testbin: $*" >&2; }
start=$SECONDS

# wrapper_module DIR MODULE@VERSION creates a throwaway module requiring MODULE.
wrapper_module() {
  local dir="$1" req="$2"
  mkdir -p "${dir}"
  (cd "${dir}" && go mod init opctl.local/testbin >/dev/null 2>&1 && go mod edit -require="${req}")
}

build_kubernetes() {
  local dir="${WORK}/kubernetes" minor major gomod
  log "building kubernetes ${K8S_VERSION}"
  wrapper_module "${dir}" "k8s.io/kubernetes@${K8S_VERSION}"
  gomod="$(cd "${dir}" && go mod download -json "k8s.io/kubernetes@${K8S_VERSION}" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
  [[ -f "${gomod}" ]] || { log "cannot find go.mod of k8s.io/kubernetes@${K8S_VERSION}"; exit 1; }
  # Every ./staging replace in kubernetes' go.mod becomes a proxy version.
  local staging="v0${K8S_VERSION#v1}" n=0 mod
  while read -r mod; do
    (cd "${dir}" && go mod edit -replace="${mod}=${mod}@${staging}")
    n=$((n + 1))
  done < <(sed -n 's#^[[:space:]]*\(k8s.io/[^[:space:]]*\)[[:space:]]*=>[[:space:]]*\./staging/.*#\1#p' "${gomod}")
  [[ ${n} -gt 0 ]] || { log "no ./staging replaces found in ${gomod}"; exit 1; }
  log "replaced ${n} staging modules with ${staging}"
  cat >"${dir}/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
  (cd "${dir}" && go mod tidy >/dev/null)
  major="${K8S_VERSION#v}"; major="${major%%.*}"
  minor="${K8S_VERSION#v*.}"; minor="${minor%%.*}"
  local ld="-s -w" pkg
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X ${pkg}.gitVersion=${K8S_VERSION} -X ${pkg}.gitMajor=${major} -X ${pkg}.gitMinor=${minor} -X ${pkg}.gitTreeState=clean"
  done
  (cd "${dir}" && go build -trimpath -ldflags "${ld}" -o "${DEST}/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
}

build_etcd() {
  local dir="${WORK}/etcd"
  log "building etcd ${ETCD_VERSION}"
  wrapper_module "${dir}" "go.etcd.io/etcd/server/v3@${ETCD_VERSION}"
  printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' >"${dir}/tools.go"
  (cd "${dir}" && go mod tidy >/dev/null && go build -trimpath -ldflags "-s -w" -o "${DEST}/etcd" go.etcd.io/etcd/server/v3)
}

build_kwok() {
  log "building kwok ${KWOK_VERSION}"
  GOBIN="${DEST}" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}"
  local src
  src="$(go env GOMODCACHE)/sigs.k8s.io/kwok@${KWOK_VERSION}/kustomize"
  rm -rf "${DEST}/kwok-data"
  mkdir -p "${DEST}/kwok-data/stages"
  cp "${src}/crd/bases/kwok.x-k8s.io_stages.yaml" "${DEST}/kwok-data/crd-stages.yaml"
  cp "${src}/stage/node/fast/node-initialize.yaml" \
    "${src}/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml" \
    "${src}/stage/pod/fast/pod-ready.yaml" "${src}/stage/pod/fast/pod-complete.yaml" \
    "${src}/stage/pod/fast/pod-delete.yaml" "${DEST}/kwok-data/stages/"
  chmod -R u+w "${DEST}/kwok-data"
}

build_monitoring() {
  log "fetching the Prometheus operator ${PROMETHEUS_OPERATOR_VERSION} CRDs"
  local dir="${WORK}/monitoring" src
  wrapper_module "${dir}" "github.com/prometheus-operator/prometheus-operator@${PROMETHEUS_OPERATOR_VERSION}"
  (cd "${dir}" && go mod download github.com/prometheus-operator/prometheus-operator)
  src="$(cd "${dir}" && go list -m -f '{{.Dir}}' github.com/prometheus-operator/prometheus-operator)/example/prometheus-operator-crd"
  rm -rf "${DEST}/monitoring-crds" && mkdir -p "${DEST}/monitoring-crds"
  cp "${src}/monitoring.coreos.com_servicemonitors.yaml" "${src}/monitoring.coreos.com_podmonitors.yaml" \
    "${src}/monitoring.coreos.com_prometheusrules.yaml" "${DEST}/monitoring-crds/"
  chmod -R u+w "${DEST}/monitoring-crds"
}

# helm_ldflags stamp what upstream's Makefile stamps: the full version, the
# tree state and the Kubernetes version that helm template and lint
# default to (here the test control plane's). The module proxy carries no
# VCS commit for helm (its .info has only Version and Time), so gitCommit
# stays empty rather than made up.
helm_ldflags() {
  local major minor pkg=helm.sh/helm/v3
  IFS=. read -r major minor _ <<<"${K8S_VERSION#v}"
  echo "-s -w -X ${pkg}/internal/version.version=${HELM_VERSION} -X ${pkg}/internal/version.gitTreeState=clean" \
    "-X ${pkg}/pkg/chartutil.k8sVersionMajor=${major} -X ${pkg}/pkg/chartutil.k8sVersionMinor=${minor}" \
    "-X ${pkg}/pkg/lint/rules.k8sVersionMajor=${major} -X ${pkg}/pkg/lint/rules.k8sVersionMinor=${minor}"
}

build_helm() {
  log "building helm ${HELM_VERSION}"
  GOBIN="${DEST}" go install -trimpath -ldflags "$(helm_ldflags)" "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}"
}

# Helm 4 reads the Kubernetes version from its client-go module version,
# which go install records, so only the version and tree state are stamped.
build_helm4() {
  log "building helm ${HELM4_VERSION} as helm4"
  local pkg=helm.sh/helm/v4
  GOBIN="${WORK}/helm4" go install -trimpath \
    -ldflags "-s -w -X ${pkg}/internal/version.version=${HELM4_VERSION} -X ${pkg}/internal/version.gitTreeState=clean" \
    "${pkg}/cmd/helm@${HELM4_VERSION}"
  mv "${WORK}/helm4/helm" "${DEST}/helm4"
}

build_opm() {
  local dir="${WORK}/opm"
  log "building opm ${OPM_VERSION}"
  # operator-framework modules cannot be installed with `go install mod@v`
  # (the proxy refuses their version listing); containers_image_openpgp
  # avoids the gpgme C library.
  wrapper_module "${dir}" "github.com/operator-framework/operator-registry@${OPM_VERSION}"
  printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/operator-framework/operator-registry/cmd/opm"\n' >"${dir}/tools.go"
  (cd "${dir}" && go mod tidy >/dev/null && go build -trimpath -tags containers_image_openpgp -ldflags "-s -w" \
    -o "${DEST}/opm" github.com/operator-framework/operator-registry/cmd/opm)
}

build_olm() {
  local dir="${WORK}/olm" mod="github.com/operator-framework/operator-lifecycle-manager"
  log "building OLM ${OLM_VERSION} (olm, catalog)"
  wrapper_module "${dir}" "${mod}@${OLM_VERSION}"
  printf '//go:build tools\n\npackage tools\n\nimport (\n\t_ "%s/cmd/catalog"\n\t_ "%s/cmd/olm"\n)\n' "${mod}" "${mod}" >"${dir}/tools.go"
  (cd "${dir}" && go mod tidy >/dev/null &&
    go build -trimpath -ldflags "-s -w" -o "${DEST}/olm" "${mod}/cmd/olm" &&
    go build -trimpath -ldflags "-s -w" -o "${DEST}/catalog" "${mod}/cmd/catalog")
  local src
  src="$(cd "${dir}" && go list -m -f '{{.Dir}}' "${mod}")/deploy/chart/crds"
  rm -rf "${DEST}/olm-crds" && mkdir -p "${DEST}/olm-crds"
  cp "${src}"/*.yaml "${DEST}/olm-crds/"
  chmod -R u+w "${DEST}/olm-crds"
  # OLM's aggregated ClusterRoles: what a cluster with OLM grants admin.
  rm -rf "${DEST}/olm-rbac" && mkdir -p "${DEST}/olm-rbac"
  cp "${src}/../templates/0000_50_olm_09-aggregated.clusterrole.yaml" "${DEST}/olm-rbac/aggregated.clusterrole.yaml"
  chmod -R u+w "${DEST}/olm-rbac"
}

# component NAME VERSION FILE... builds NAME unless its stamp matches and
# its files exist.
built=()
component() {
  local name="$1" want="$1=$2 go=${GOVERSION}" f
  shift 2
  local stamp="${DEST}/.stamp-${name}"
  if [[ -f "${stamp}" && "$(cat "${stamp}")" == "${want}" ]]; then
    local ok=1
    for f in "$@"; do [[ -e "${DEST}/${f}" ]] || ok=0; done
    [[ ${ok} -eq 1 ]] && return 0
  fi
  rm -f "${stamp}"
  "build_${name}"
  echo "${want}" >"${stamp}"
  built+=("${name}")
}

component kubernetes "${K8S_VERSION}" kube-apiserver kube-controller-manager kube-scheduler kubectl
component etcd "${ETCD_VERSION}" etcd
component kwok "${KWOK_VERSION}" kwok kwok-data/crd-stages.yaml
component helm "${HELM_VERSION} $(helm_ldflags | sha256sum | cut -c1-12)" helm
component helm4 "${HELM4_VERSION}" helm4
component opm "${OPM_VERSION}" opm
component olm "${OLM_VERSION}" olm catalog olm-crds olm-rbac/aggregated.clusterrole.yaml
component monitoring "${PROMETHEUS_OPERATOR_VERSION}" monitoring-crds/monitoring.coreos.com_servicemonitors.yaml
rm -f "${DEST}/.stamp"
if [[ ${#built[@]} -eq 0 ]]; then
  echo "testbin: cached in bin/k8s/${K8S_VERSION}"
else
  log "built ${built[*]} in $((SECONDS - start))s"
fi
