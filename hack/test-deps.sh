#!/usr/bin/env bash
# Installs the Debian packages the tests need: docker-registry (a real OCI
# registry the packaging and publish tests run as a process), prometheus
# (promtool checks and unit-tests the alerts; the sample's metrics test
# scrapes with it), and the sample operator's data path: redis-server
# (Redis 7, the protocol and RDB format of Valkey), redis-tools
# (redis-benchmark) and prometheus-redis-exporter; and the memcached
# operator's data path: memcached. Idempotent.
set -euo pipefail
missing=()
[[ -x /usr/bin/docker-registry ]] || missing+=(docker-registry)
[[ -x /usr/bin/promtool ]] || missing+=(prometheus)
[[ -x /usr/bin/redis-server ]] || missing+=(redis-server)
[[ -x /usr/bin/redis-benchmark ]] || missing+=(redis-tools)
[[ -x /usr/bin/prometheus-redis-exporter ]] || missing+=(prometheus-redis-exporter)
[[ -x /usr/bin/memcached ]] || missing+=(memcached)
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
