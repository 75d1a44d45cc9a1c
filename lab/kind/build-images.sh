#!/usr/bin/env bash
# Build the container images of the kind lab with Docker:
#   - Karmada's controller-manager, scheduler, webhook and aggregated-apiserver with
#     upstream's own image build (make image-<component>, hack/docker.sh) in the
#     patched tree (LAB_KARMADA=patched, the series applied) or the pristine
#     upstream tree (LAB_KARMADA=upstream), the trees hack/build.sh prepares;
#   - the Flink job image (lab/kind/images/flink-job.Dockerfile on the official
#     Flink image, with the thin job jar make flink-job built);
#   - the restore webhook image (restore/Dockerfile);
#   - the e2e suite's workload (lab/cmd/lab-workload), one static binary imported.
# Usage: lab/kind/build-images.sh patched|upstream TAG
# Prints the image references, one per line.
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../hack/lib/init.sh"

flavour="${1:?usage: build-images.sh patched|upstream TAG}"
tag="${2:?usage: build-images.sh patched|upstream TAG}"
tree="$(karmada::tree "${flavour}")"

registry="docker.io/karmada"
arch="$(go env GOARCH)"
components=(karmada-controller-manager karmada-scheduler karmada-webhook karmada-aggregated-apiserver)
mkdir -p "${OUTPUT}/logs"
for c in "${components[@]}"; do
  log="${OUTPUT}/logs/image-${flavour}-${c}.log"
  if ! make -C "${tree}" "image-${c}" REGISTRY="${registry}" VERSION="${tag}" GOARCH="${arch}" >"${log}" 2>&1; then
    tail -n 20 "${log}" >&2
    die "make image-${c} failed in ${tree#"${ROOT}"/}; log: ${log#"${ROOT}"/}"
  fi
  echo "${registry}/${c}:${tag}"
done

flink_version="$(sed -n 's:.*<flink.version>\(.*\)</flink.version>.*:\1:p' "${ROOT}/lab/flink/pom.xml" | head -n 1)"
[[ -n "${flink_version}" ]] || die "no <flink.version> in lab/flink/pom.xml"
jar="${ROOT}/lab/flink/target/failover-lab-flink-job-thin.jar"
[[ -f "${jar}" ]] || die "${jar#"${ROOT}"/} (the job image's thin jar) is missing; run make flink-job"
# buildx with --load and without attestations: an image with a provenance or SBOM
# manifest is an index that `kind load docker-image` cannot import from the
# containerd image store (Docker Desktop's default).
build=(docker buildx build --load --provenance=false --sbom=false --quiet)
"${build[@]}" --build-arg "FLINK_VERSION=${flink_version}" \
  -t "failover-lab/flink-job:${tag}" -f "${ROOT}/lab/kind/images/flink-job.Dockerfile" "${ROOT}/lab/flink/target" >/dev/null
echo "failover-lab/flink-job:${tag}"
"${build[@]}" -t "failover-lab/flink-restore-webhook:${tag}" -f "${ROOT}/restore/Dockerfile" "${ROOT}" >/dev/null
echo "failover-lab/flink-restore-webhook:${tag}"

# The e2e suite's workload (lab/cmd/lab-workload, lab.WorkloadImage): one static binary.
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
# shellcheck source=lab/kind/images/import.sh
source "${ROOT}/lab/kind/images/import.sh"
mkdir -p "${OUTPUT}/kind/bin"
(cd "${ROOT}" && CGO_ENABLED=0 GOARCH="${arch}" go build -trimpath -ldflags "-s -w" -o "${OUTPUT}/kind/bin/lab-workload" ./lab/cmd/lab-workload)
import_binary "failover-lab/workload:lab" "${OUTPUT}/kind/bin/lab-workload" /lab-workload --change 'ENTRYPOINT ["/lab-workload"]'
