#!/usr/bin/env bash
# Static checks of the kind lab (LAB_PROVIDER=kind), runnable without Docker:
#   1. go test ./lab/kind with LAB_KIND_VERIFY=1 (skips become failures):
#      - each kind configuration is loaded, defaulted and validated by kind's own
#        cluster-create code (sigs.k8s.io/kind, pinned by go.mod) up to the first
#        provisioning call, which a docker stand-in refuses;
#      - the karmadactl init configuration passes karmadactl's loader and validation
#        and carries the lab's images, feature gates and flags; the patched tree's
#        CRDs are packed as karmadactl init reads them;
#      - every manifest is decoded strictly (built-in kinds), Karmada policies go
#        through Karmada's validation, custom resources are validated against the
#        CRDs of the pinned cert-manager, Kyverno and Flink operator versions;
#      - images and charts are pinned; the preflight fails fast without Docker;
#   2. `LAB_PROVIDER=kind LAB_DOCKER=system make lab-up` against a docker CLI without
#      an engine fails within seconds, naming Docker.
# Helm chart values are not rendered: the charts (cert-manager, the Flink operator,
# Kyverno) come from their repositories at lab-up time.
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

"${ROOT}/hack/series-tree.sh" >/dev/null
(cd "${ROOT}" && LAB_KIND_VERIFY=1 go test -count=1 ./lab/kind/) || die "kind lab checks failed"

# The lab command is built first: the check times the preflight, not the build.
make -C "${ROOT}" --no-print-directory lab-cli >/dev/null
start=${SECONDS}
log="${OUTPUT}/logs/verify-kind-lab-up.log"
mkdir -p "$(dirname "${log}")"
# LAB_DOCKER=system: the machine's engine only (no engine answers), so the lab does
# not fall back to a dockerd of its own.
if (cd "${ROOT}" && PATH="${ROOT}/lab/kind/testdata/shim:${PATH}" DOCKER_SHIM_MODE=down LAB_PROVIDER=kind LAB_DOCKER=system \
      timeout 60 make --no-print-directory lab-up) >"${log}" 2>&1; then
  die "LAB_PROVIDER=kind make lab-up passed without a Docker engine; log: ${log#"${ROOT}"/}"
fi
took=$((SECONDS - start))
grep -q "needs a running Docker engine" "${log}" || { cat "${log}" >&2; die "LAB_PROVIDER=kind make lab-up did not name Docker"; }
((took <= 15)) || die "LAB_PROVIDER=kind make lab-up took ${took}s to fail without Docker"
log::ok "LAB_PROVIDER=kind make lab-up without a Docker engine fails in ${took}s, naming Docker"
