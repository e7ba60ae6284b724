#!/usr/bin/env bash
# Installs the Debian packages the tests need: docker-registry (a real OCI
# registry the packaging and publish tests run as a process) and prometheus
# (promtool checks and unit-tests the alerts). Idempotent.
set -euo pipefail
missing=()
[[ -x /usr/bin/docker-registry ]] || missing+=(docker-registry)
[[ -x /usr/bin/promtool ]] || missing+=(prometheus)
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "test-deps: missing Debian packages: ${missing[*]}; install them with: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "test-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
