#!/usr/bin/env bash
# make flink-rto: on the lab (started if needed, left running), FLINK_RTO_RUNS (10)
# Flink failovers by a member crash and as many application failovers; then `go run
# ./bench flink-rto` prints each run's RTO phases, p50/p90 and the committed output's
# missing/duplicated, and fails unless every run restored the latest completed
# checkpoint exactly once.
#   E2E_ARTIFACTS=<folder>   the runs' artifacts (default _output/e2e/<time>)
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
# shellcheck source=hack/lib/e2e.sh
source "${ROOT}/hack/lib/e2e.sh"

runs="${FLINK_RTO_RUNS:-10}"
log="${E2E_ARTIFACTS}/flink-rto.log"
rc=0
for i in $(seq "${runs}"); do
  echo "flink-rto: run ${i} of ${runs}"
  E2E_KEEP_LAB=1 e2e::run -ginkgo.label-filter='flink && !kyverno' \
    -ginkgo.focus="Flink cluster failover: the member crashes|Flink application failover: the job loses its task slots" \
    >>"${log}" 2>&1 || { rc=$?; break; }
done
(cd "${ROOT}" && go run ./bench flink-rto "${E2E_ARTIFACTS}/flink-failovers.jsonl")
[[ ${rc} -eq 0 ]] || { echo "flink-rto: a run failed (log: ${log})"; exit "${rc}"; }
