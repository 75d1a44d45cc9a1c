#!/usr/bin/env bash
# Build the kind lab's node image on this machine, without a registry: a
# Debian bookworm root file system (debootstrap from Debian's packages:
# systemd, containerd, runc, iptables), kind's node layout and entrypoint from
# the kind module go.mod pins (images/base/files), and Kubernetes at the lab's
# pinned version built from its Go module (kubelet, kubeadm, kubectl). The
# images kubeadm asks for are built too and preloaded into the node (imported
# into containerd at boot, before the kubelet starts):
#   registry.k8s.io/kube-{apiserver,controller-manager,scheduler}: the binary alone;
#   registry.k8s.io/kube-proxy: a minimal Debian root (iptables, conntrack) and the binary;
#   registry.k8s.io/etcd: the lab's etcd (lab/tools/etcd; kind configs set its tag);
#   registry.k8s.io/coredns/coredns: CoreDNS from its Go module (lab/tools/coredns);
#   registry.k8s.io/pause: pause.c of the Kubernetes module, compiled statically.
# The CNI is the reference plugins' ptp with host-local IPAM (lab/tools/cni-plugins,
# lab/kind/images/node/10-lab.conflist): every lab cluster has a single node, and
# kind's default CNI, kindnetd, is not served as a Go module. crictl (cri-tools,
# lab/tools/cri-tools) is in the node as in kind's: `kind export logs` lists the
# node's images and containers with it.
#
# Needs root (debootstrap, chroot) and a Docker engine (DOCKER_HOST: the lab's,
# see `lab docker start`). The image is tagged with a key of everything it is
# built from and rebuilt only when that changes; the root file systems are
# cached in _output/kind/rootfs/. Prints NODE_IMAGE=<the node image>,
# ETCD_IMAGE_TAG=<the tag of the etcd image it preloads> and
# KUBERNETES_VERSION=<its Kubernetes, the control-plane images' tag>.
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../hack/lib/init.sh"
# shellcheck source=hack/lib/tools.sh
source "${ROOT}/hack/lib/tools.sh"
# shellcheck source=lab/kind/images/rootfs.sh
source "${ROOT}/lab/kind/images/rootfs.sh"

[[ "$(id -u)" == 0 ]] || die "building the kind node image needs root (debootstrap, chroot)"
for tool in debootstrap docker gcc; do
  command -v "${tool}" >/dev/null || die "building the kind node image needs ${tool} (Debian: apt-get install debootstrap docker.io gcc)"
done

TOOLS="${ROOT}/lab/tools"
NODE_FILES="${ROOT}/lab/kind/images/node"
KIND_OUT="${OUTPUT}/kind"
MIRROR="${ROOTFS_MIRROR}"
SUITE="${ROOTFS_SUITE}"
NODE_PACKAGES=systemd,systemd-sysv,dbus,containerd,runc,iptables,nftables,conntrack,ethtool,socat,mount,util-linux,kmod,ca-certificates,procps,iproute2,libseccomp2,jq,bash
BASE_PACKAGES=iptables,nftables,conntrack,ca-certificates

k8s_version="$(tools::modversion "${TOOLS}/kubernetes" k8s.io/kubernetes)"
etcd_version="$(tools::modversion "${TOOLS}/etcd" go.etcd.io/etcd/server/v3)"
coredns_version="$(tools::modversion "${TOOLS}/coredns" github.com/coredns/coredns)"
cni_version="$(tools::modversion "${TOOLS}/cni-plugins" github.com/containernetworking/plugins)"
crictl_version="$(tools::modversion "${TOOLS}/cri-tools" sigs.k8s.io/cri-tools)"
kind_dir="$(cd "${ROOT}" && go mod download -json sigs.k8s.io/kind | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[[ -d "${kind_dir}/images/base/files" ]] || die "kind's node layout not found in ${kind_dir:-the kind module}"
kind_version="$(basename "${kind_dir}")"
k8s_dir="$(cd "${TOOLS}/kubernetes" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)"

# The images kubeadm asks for, by the names it asks for them.
k8s_bin="${OUTPUT}/bin/kubernetes-${k8s_version}"
tools::build "${TOOLS}/kubernetes" "${k8s_bin}" "$(tools::k8s_ldflags "${k8s_version}")" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl \
  k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kubeadm k8s.io/kubernetes/cmd/kube-proxy
etcd_bin="${OUTPUT}/bin/etcd-${etcd_version}"
tools::build "${TOOLS}/etcd" "${etcd_bin}" "-s -w" go.etcd.io/etcd/server/v3
coredns_bin="${OUTPUT}/bin/coredns-${coredns_version}"
tools::build "${TOOLS}/coredns" "${coredns_bin}" "-s -w" github.com/coredns/coredns
cni_bin="${OUTPUT}/bin/cni-plugins-${cni_version}"
tools::build "${TOOLS}/cni-plugins" "${cni_bin}" "-s -w" \
  github.com/containernetworking/plugins/plugins/main/ptp github.com/containernetworking/plugins/plugins/main/loopback \
  github.com/containernetworking/plugins/plugins/ipam/host-local github.com/containernetworking/plugins/plugins/meta/portmap
crictl_bin="${OUTPUT}/bin/cri-tools-${crictl_version}"
tools::build "${TOOLS}/cri-tools" "${crictl_bin}" "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=${crictl_version}" \
  sigs.k8s.io/cri-tools/cmd/crictl
mapfile -t wanted < <("${k8s_bin}/kubeadm" config images list --kubernetes-version "${k8s_version}")
image_of() { printf '%s\n' "${wanted[@]}" | grep -m 1 "/$1:" || die "kubeadm ${k8s_version} asks for no $1 image"; }
pause_image="$(image_of pause)"
pause_version="${pause_image##*:}"
etcd_image="registry.k8s.io/etcd:${etcd_version#v}-0"
coredns_image="$(image_of coredns)"
[[ "${coredns_image##*:}" == "${coredns_version}" ]] ||
  die "kubeadm ${k8s_version} asks for ${coredns_image}; lab/tools/coredns pins ${coredns_version}"

key="$( { cat "${BASH_SOURCE[0]}" "${NODE_FILES}"/*; echo "${SUITE} ${MIRROR} ${NODE_PACKAGES} ${BASE_PACKAGES}";
  echo "${k8s_version} ${etcd_version} ${coredns_version} ${cni_version} ${crictl_version} ${kind_version} ${pause_version}"; } | sha256sum | cut -c1-12)"
node_image="karmada-failover-lab/kind-node:${k8s_version}-${key}"
if docker image inspect "${node_image}" >/dev/null 2>&1 && [[ "${FORCE:-0}" != 1 ]]; then
  printf 'NODE_IMAGE=%s\nETCD_IMAGE_TAG=%s\nKUBERNETES_VERSION=%s\n' "${node_image}" "${etcd_image##*:}" "${k8s_version}"
  exit 0
fi

mkdir -p "${KIND_OUT}/rootfs" "${OUTPUT}/logs"
work="$(mktemp -d "${KIND_OUT}/.node-build.XXXXXX")"
trap 'rm -rf "${work}"' EXIT

# single_binary_image IMAGE BINARY: an image of one static binary in /usr/local/bin.
single_binary_image() {
  local image="$1" bin="$2"
  mkdir -p "${work}/img/usr/local/bin"
  rm -f "${work}/img/usr/local/bin/"*
  install -m 0755 "${bin}" "${work}/img/usr/local/bin/"
  tar -C "${work}/img" --owner=0 --group=0 -c . | docker import \
    --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' --change "ENTRYPOINT [\"/usr/local/bin/$(basename "${bin}")\"]" - "${image}" >/dev/null
}

gcc -static -Os -DVERSION="v${pause_version}-lab" -o "${work}/pause" "${k8s_dir}/build/pause/linux/pause.c"
mkdir -p "${work}/pauseimg"
install -m 0755 "${work}/pause" "${work}/pauseimg/pause"
tar -C "${work}/pauseimg" --owner=0 --group=0 -c . | docker import --change 'ENTRYPOINT ["/pause"]' - "${pause_image}" >/dev/null
for c in kube-apiserver kube-controller-manager kube-scheduler; do
  single_binary_image "$(image_of "${c}")" "${k8s_bin}/${c}"
done
single_binary_image "${etcd_image}" "${etcd_bin}/etcd"
single_binary_image "${coredns_image}" "${coredns_bin}/coredns"
# kube-proxy runs iptables: a minimal Debian root with iptables and conntrack.
base_tar="$(rootfs base "${BASE_PACKAGES}")"
mkdir -p "${work}/proxy/usr/local/bin"
install -m 0755 "${k8s_bin}/kube-proxy" "${work}/proxy/usr/local/bin/"
cp "${base_tar}" "${work}/proxy.tar"
tar -C "${work}/proxy" --owner=0 --group=0 -rf "${work}/proxy.tar" ./usr/local/bin/kube-proxy
docker import --change 'ENV PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' "${work}/proxy.tar" "$(image_of kube-proxy)" >/dev/null
preload=("${pause_image}" "${etcd_image}" "${coredns_image}")
for c in kube-apiserver kube-controller-manager kube-scheduler kube-proxy; do preload+=("$(image_of "${c}")"); done

# The node's root file system.
node_tar="$(rootfs node "${NODE_PACKAGES}")"
root="${work}/node"
mkdir -p "${root}"
tar -C "${root}" --numeric-owner -xf "${node_tar}"
files="${kind_dir}/images/base/files"
install -D -m 0755 "${files}/usr/local/bin/entrypoint" "${root}/usr/local/bin/entrypoint"
install -d -m 0755 "${root}/kind/bin" "${root}/kind/images" "${root}/etc/kubernetes/manifests" "${root}/opt/cni/bin" "${root}/etc/cni/net.d"
install -m 0755 "${files}"/kind/bin/*.sh "${root}/kind/bin/"
for f in etc/crictl.yaml etc/default/kubelet etc/sysctl.d/10-network-security.conf etc/sysctl.d/10-network-magic.conf \
  etc/systemd/system/kubelet.slice etc/systemd/system/kubelet.service etc/systemd/system/undo-mount-hacks.service \
  etc/systemd/system/kubelet.service.d/10-kubeadm.conf etc/systemd/system/kubelet.service.d/11-kind.conf \
  etc/systemd/system/containerd.service; do
  install -D -m 0644 "${files}/${f}" "${root}/${f}"
done
# containerd: kind's configuration, with the sandbox image the lab built, and
# restrict_oom_score_adj (the pause container's oom_score_adj of -998 needs
# CAP_SYS_RESOURCE, which some machines' bounding sets lack; with it, each
# container's score is kept at or above containerd's own).
sed -e "s|sandbox_image = .*|sandbox_image = \"${pause_image}\"|" \
  -e 's|restrict_oom_score_adj = false|restrict_oom_score_adj = true|' \
  "${files}/etc/containerd/config.toml" >"${root}/etc/containerd/config.toml"
grep -q "restrict_oom_score_adj = true" "${root}/etc/containerd/config.toml" || die "kind's containerd config has no restrict_oom_score_adj to set"
ln -sf /usr/bin/containerd "${root}/usr/local/bin/containerd"
chroot "${root}" ctr oci spec | chroot "${root}" jq \
  '.hooks.createContainer[.hooks.createContainer|length] |= . + {"path": "/kind/bin/mount-product-files.sh"} | del(.process.rlimits)' \
  >"${root}/etc/containerd/cri-base.json"
install -m 0755 "${k8s_bin}/kubelet" "${k8s_bin}/kubeadm" "${k8s_bin}/kubectl" "${root}/usr/bin/"
install -m 0755 "${crictl_bin}/crictl" "${root}/usr/local/bin/crictl"
install -m 0755 "${cni_bin}"/* "${root}/opt/cni/bin/"
install -m 0644 "${NODE_FILES}/10-lab.conflist" "${root}/etc/cni/net.d/10-lab.conflist"
install -m 0644 "${NODE_FILES}/lab-preload-images.service" "${root}/etc/systemd/system/lab-preload-images.service"
docker save "${preload[@]}" >"${root}/kind/images/lab-preload.tar"
echo "${k8s_version}" >"${root}/kind/version"
# systemd as kind's base image sets it up: no units but the node's own.
find "${root}/lib/systemd/system/sysinit.target.wants/" -name "systemd-tmpfiles-setup.service" -delete
rm -f "${root}"/lib/systemd/system/multi-user.target.wants/* "${root}"/etc/systemd/system/*.wants/* \
  "${root}"/lib/systemd/system/local-fs.target.wants/* "${root}"/lib/systemd/system/sockets.target.wants/*udev* \
  "${root}"/lib/systemd/system/sockets.target.wants/*initctl* "${root}"/lib/systemd/system/basic.target.wants/*
echo "ReadKMsg=no" >>"${root}/etc/systemd/journald.conf"
chroot "${root}" systemctl enable kubelet.service containerd.service undo-mount-hacks.service lab-preload-images.service >/dev/null 2>&1
chroot "${root}" systemctl mask systemd-binfmt.service >/dev/null 2>&1
ln -sf /lib/systemd/systemd "${root}/sbin/init"

# Import, then one legacy build step for what docker import cannot set (STOPSIGNAL).
stage="karmada-failover-lab/kind-node-stage:${key}"
tar -C "${root}" --numeric-owner -c . | docker import --change 'ENV container=docker' \
  --change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' - "${stage}" >/dev/null
mkdir -p "${work}/ctx"
printf 'FROM %s\nSTOPSIGNAL SIGRTMIN+3\n' "${stage}" >"${work}/ctx/Dockerfile"
DOCKER_BUILDKIT=0 docker build -q -t "${node_image}" "${work}/ctx" >/dev/null 2>"${work}/build.log" || { cat "${work}/build.log" >&2; die "docker build of ${node_image} failed"; }
docker rmi "${stage}" >/dev/null
log::ok "kind node image ${node_image} (Kubernetes ${k8s_version}, kind ${kind_version}; preloaded: ${preload[*]})" >&2
printf 'NODE_IMAGE=%s\nETCD_IMAGE_TAG=%s\nKUBERNETES_VERSION=%s\n' "${node_image}" "${etcd_image##*:}" "${k8s_version}"
