#!/usr/bin/env bash
# Fails when any generated file does not match what `make generate` makes
# from the sources in the working tree: deepcopy code, CRDs and RBAC of the
# sample, operatorkit's test API and the Tenant API; the memcached
# operator's (opctl kit generate); the charts and bundles
# opctl package writes for the sample and for opctl itself; and
# docs/checks.md from the validate check registry. The built-in admin
# role's rules (make generate-adminrole) need a control plane: the cluster
# test TestClusterTenancyCheckOwnerRole holds them to the live role.
# Usage: hack/verify-generate.sh <make-command>
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"
GENERATED=(
  operators/sample/api/v1alpha1/zz_generated.deepcopy.go
  operators/sample/config/crd/bases
  operators/sample/config/rbac/role.yaml
  pkg/operatorkit/internal/testapi/v1alpha1/zz_generated.deepcopy.go
  pkg/operatorkit/internal/testapi/testdata/crd
  operators/memcached
  pkg/tenancy/api/v1alpha1/zz_generated.deepcopy.go
  config/crd/bases
  config/rbac/role.yaml
  charts/sample-operator
  bundle/sample-operator
  charts/opctl
  bundle/opctl
  docs/checks.md
)
SNAP="$(mktemp -d)"
trap 'rm -rf "${SNAP}"' EXIT
for p in "${GENERATED[@]}"; do
  mkdir -p "${SNAP}/$(dirname "${p}")"
  if [[ -e "${p}" ]]; then cp -r "${p}" "${SNAP}/${p}"; fi
done
"${@:-make}" generate >/dev/null
stale=0
for p in "${GENERATED[@]}"; do
  if [[ ! -e "${SNAP}/${p}" ]] || ! diff -r "${SNAP}/${p}" "${p}" >/dev/null; then
    echo "out of date: ${p}"
    stale=1
  fi
done
if [[ ${stale} -ne 0 ]]; then
  echo "generated files were out of date and have been regenerated: review and commit them"
  exit 1
fi
