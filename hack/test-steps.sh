#!/usr/bin/env bash
# Runs make's test steps one after the other, timing each, and prints a table of
# the times at the end (or at the first step that fails, which ends the run).
# Usage: hack/test-steps.sh STEP...   (make test passes its steps)
set -o errexit
set -o nounset
set -o pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
[[ $# -gt 0 ]] || { echo "usage: $0 STEP..." >&2; exit 2; }

names=() times=() results=()
start=${SECONDS}
summary() {
	echo
	echo "make test: steps"
	local i
	for i in "${!names[@]}"; do
		printf '  %-22s %6ss  %s\n' "${names[$i]}" "${times[$i]}" "${results[$i]}"
	done
	printf '  %-22s %6ss\n' "total" "$((SECONDS - start))"
}

for step in "$@"; do
	t0=${SECONDS}
	rc=0
	"${MAKE:-make}" --no-print-directory "${step}" || rc=$?
	names+=("${step}") times+=("$((SECONDS - t0))")
	if [[ ${rc} -ne 0 ]]; then
		results+=("failed (exit ${rc})")
		summary
		exit "${rc}"
	fi
	results+=("ok")
done
summary
