#!/usr/bin/env bash
# Build the kind lab's own images without a registry (LAB_IMAGES=build), each
# from a static binary this project builds, imported into the engine in use
# (DOCKER_HOST) under the name its manifest uses:
#   docker.io/karmada/<component>:TAG   Karmada's controller-manager, scheduler,
#       webhook and aggregated-apiserver from the FLAVOUR tree's build
#       (_output/bin/<flavour>/, make build or make build-upstream), at /bin/<name>
#       as upstream's images have them (karmadactl init runs /bin/<name>);
#   failover-lab/flink-restore-webhook:TAG   the restore webhook (restore/), as
#       restore/Dockerfile builds it: /flink-restore-webhook, user 65532;
#   failover-lab/seaweedfs:TAG   SeaweedFS (lab/tools/seaweedfs), the S3 store;
#   failover-lab/flink-runner:TAG   the FlinkDeployment runner (lab/flinkrunner), the
#       members' stand-in for flink-kubernetes-operator;
#   failover-lab/workload:lab   the e2e suite's workload (lab/cmd/lab-workload);
#   failover-lab/flink-job:TAG   the Flink job image: a JRE from Debian's packages
#       (debootstrap, lab/kind/images/rootfs.sh) and the lab's job jar with Flink in it.
# Karmada's kube-apiserver, kube-controller-manager and etcd are the node
# image's own (lab/kind/images/build-node-image.sh).
# Usage: build-lab-images.sh patched|upstream TAG. Prints the image references.
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../hack/lib/init.sh"

flavour="${1:?usage: build-lab-images.sh patched|upstream TAG}"
tag="${2:?usage: build-lab-images.sh patched|upstream TAG}"
bin="${OUTPUT}/bin/${flavour}"

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

# shellcheck source=lab/kind/images/import.sh
source "${ROOT}/lab/kind/images/import.sh"

for c in karmada-controller-manager karmada-scheduler karmada-webhook karmada-aggregated-apiserver; do
  import_binary "docker.io/karmada/${c}:${tag}" "${bin}/${c}" "/bin/${c}" --change "ENTRYPOINT [\"/bin/${c}\"]"
done

mkdir -p "${OUTPUT}/kind/bin"
(cd "${ROOT}" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "${OUTPUT}/kind/bin/flink-restore-webhook" ./restore/cmd/flink-restore-webhook)
import_binary "failover-lab/flink-restore-webhook:${tag}" "${OUTPUT}/kind/bin/flink-restore-webhook" /flink-restore-webhook \
  --change 'USER 65532:65532' --change 'ENTRYPOINT ["/flink-restore-webhook"]'

# SeaweedFS as the hermetic lab builds it (hack/build-seaweedfs.sh, cached by version).
weed_dir="$("${ROOT}/hack/build-seaweedfs.sh" | sed -n 's/^SEAWEEDFS_BIN=//p')"
import_binary "failover-lab/seaweedfs:${tag}" "${weed_dir}/weed" /usr/bin/weed --change 'ENTRYPOINT ["/usr/bin/weed"]'

# The FlinkDeployment runner (lab/flinkrunner), which runs in every member as a
# Deployment where the operator would, and starts each job in a pod of its own.
(cd "${ROOT}" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "${OUTPUT}/kind/bin/flink-runner" ./lab/cmd/flink-runner)
import_binary "failover-lab/flink-runner:${tag}" "${OUTPUT}/kind/bin/flink-runner" /usr/local/bin/flink-runner \
  --change 'USER 65532:65532' --change 'ENTRYPOINT ["/usr/local/bin/flink-runner"]'

# The e2e suite's workload (lab/cmd/lab-workload, lab.WorkloadImage): it runs like the
# pause container and answers its readiness probe, which the kind lab's FailPods fails.
(cd "${ROOT}" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "${OUTPUT}/kind/bin/lab-workload" ./lab/cmd/lab-workload)
import_binary "failover-lab/workload:lab" "${OUTPUT}/kind/bin/lab-workload" /lab-workload --change 'ENTRYPOINT ["/lab-workload"]'

# The Flink job image, in place of Flink's official one: a JRE from Debian's
# packages and the lab's job jar with Flink inside (lab/flink, make flink-job)
# at the path FlinkDeployments name (jarURI local:///opt/flink/usrlib/...).
# Its pods run lab/flink's per-job MiniCluster (java -cp <jar> LocalRunner).
# shellcheck source=lab/kind/images/rootfs.sh
source "${ROOT}/lab/kind/images/rootfs.sh"
jar="${ROOT}/lab/flink/target/failover-lab-flink-job.jar"
[[ -s "${jar}" ]] || die "${jar#"${ROOT}"/} is missing (make flink-job)"
jre_tar="$(rootfs jre openjdk-17-jre-headless,ca-certificates)"
flink_image="failover-lab/flink-job:${tag}"
digest="$( { basename "${jre_tar}"; sha256sum <"${jar}"; } | sha256sum | cut -c1-32)"
have="$(docker image inspect -f '{{index .Config.Labels "lab.karmada.io/source"}}' "${flink_image}" 2>/dev/null || true)"
if [[ "${have}" != "${digest}" ]]; then
  cp "${jre_tar}" "${work}/flink.tar"
  install -D -m 0644 "${jar}" "${work}/flinkimg/opt/flink/usrlib/failover-lab-flink-job.jar"
  tar -C "${work}/flinkimg" --owner=0 --group=0 -rf "${work}/flink.tar" ./opt/flink
  docker import --change "LABEL lab.karmada.io/source=${digest}" --change 'WORKDIR /opt/flink' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    "${work}/flink.tar" "${flink_image}" >/dev/null
fi
echo "${flink_image}"
