#!/usr/bin/env bash
# Runs every fuzz target of the module for FUZZTIME each (default 10m) and
# prints one line per target: executions, new corpus entries and the
# result. A failing input is written to the package's testdata/fuzz/ by go
# test; commit it as a seed once fixed. Usage: hack/fuzz.sh [regexp]
set -uo pipefail
FUZZTIME=${FUZZTIME:-10m}
FUZZFLAGS=${FUZZFLAGS:-}
match=${1:-.}
export OPCTL_SKIP_CLUSTER=1 # fuzz targets need no control plane
logdir=$(mktemp -d)
summary=()
status=0
while IFS=: read -r file name; do
  pkg=$(dirname "$file")
  [[ $name =~ $match ]] || continue
  log=$logdir/$name.log
  echo "fuzz: $name in $pkg for $FUZZTIME" >&2
  if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" $FUZZFLAGS "$pkg" >"$log" 2>&1; then
    result=ok
  else
    result=FAIL
    status=1
    grep -E 'Failing input|--- FAIL|fuzz_test.go|_test.go:[0-9]+' "$log" | head -5 >&2
  fi
  last=$(grep -E '^fuzz: elapsed' "$log" | tail -1)
  execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")
  interesting=$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$last")
  summary+=("$(printf '%-22s %-28s execs %-10s new %-6s %s' "$name" "$pkg" "${execs:-?}" "${interesting:-?}" "$result")")
done < <(grep -roE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]+' . | grep -v '^./bin/' | sed -E 's/func //' | sort -t: -k2)
printf '%s\n' "${summary[@]}"
rm -rf "$logdir"
exit $status
