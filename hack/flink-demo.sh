#!/usr/bin/env bash
# make flink-demo: on the lab (started if needed, left running), a FlinkDeployment
# fails over when its member crashes and resumes from its latest checkpoint (the e2e
# spec "Flink cluster failover: the member crashes"). Prints the timeline and the
# line "restored from … (latest completed: chk-M) · missing=… · duplicated=… ·
# reprocessed=… · rto=… · by webhook|kyverno"; fails unless nothing is missing or
# duplicated in the job's committed output.
#   E2E_ARTIFACTS=<folder>   the run's artifacts (default _output/e2e/<time>)
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
# shellcheck source=hack/lib/e2e.sh
source "${ROOT}/hack/lib/e2e.sh"

log="${E2E_ARTIFACTS}/flink-demo.log"
rc=0
E2E_KEEP_LAB=1 e2e::run -ginkgo.focus="Flink cluster failover: the member crashes" -ginkgo.label-filter='flink && !kyverno' \
  >"${log}" 2>&1 || rc=$?
grep -E "STEP|restored from|FAIL|ok " "${log}" || true
sed -n '/^## Flink/,$p' "${E2E_ARTIFACTS}/report.md" 2>/dev/null || true
[[ ${rc} -eq 0 ]] || { echo "flink-demo: the scenario failed (log: ${log})"; exit "${rc}"; }
grep -E "^ +restored from .* · missing=0 · duplicated=0 " "${log}" | tail -1 | sed 's/^ *//' | grep . ||
  { echo "flink-demo: no restore with missing=0 duplicated=0 (log: ${log})"; exit 1; }
