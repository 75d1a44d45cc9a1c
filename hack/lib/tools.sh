# shellcheck shell=bash
# Helpers for building the lab's binaries from tools modules (lab/tools/*).
# Sourced after hack/lib/init.sh.

# tools::build MODULE_DIR OUT_DIR LDFLAGS PKG...: builds each package into
# OUT_DIR/<name> (name: the package's last element; go.etcd.io/etcd/server/v3 is
# etcd), log in _output/logs/build-<name>.log. An existing binary is kept unless
# FORCE=1.
tools::build() {
  local moddir="$1" out="$2" ldflags="$3"
  shift 3
  mkdir -p "${out}" "${OUTPUT}/logs"
  local pkg name start log
  for pkg in "$@"; do
    name="$(basename "${pkg}")"
    [[ "${name}" == v3 ]] && name=etcd
    if [[ -x "${out}/${name}" && "${FORCE:-0}" != 1 ]]; then
      continue
    fi
    start=${SECONDS}
    log="${OUTPUT}/logs/build-${name}.log"
    if ! (cd "${moddir}" && CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags}" -o "${out}/${name}.tmp" "${pkg}") >"${log}" 2>&1; then
      tail -n 20 "${log}" >&2
      die "building ${name} failed; log: ${log#"${ROOT}"/}"
    fi
    mv "${out}/${name}.tmp" "${out}/${name}"
    log::ok "${name} ($((SECONDS - start))s)"
  done
}

# tools::k8s_ldflags VERSION: linker flags that stamp a Kubernetes binary with VERSION
# (what `kubectl version` and the servers' /version report).
tools::k8s_ldflags() {
  local version="$1" minor flags="-s -w" pkg
  minor="$(cut -d. -f2 <<<"${version}")"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X ${pkg}.gitVersion=${version} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor} -X ${pkg}.gitTreeState=clean"
  done
  echo "${flags}"
}

# tools::modversion MODULE_DIR MODULE: the version MODULE_DIR's go.mod pins.
tools::modversion() { (cd "$1" && go list -m -f '{{.Version}}' "$2"); }

# tools::record KEY=DIR...: adds or replaces these lines in _output/bin/lab-binaries.env,
# the file the lab finds its binaries through (lab/config/binaries.go), keeping
# the lines other scripts own.
tools::record() {
  local env_file="${OUTPUT}/bin/lab-binaries.env" kv keys=()
  mkdir -p "$(dirname "${env_file}")"
  touch "${env_file}"
  for kv in "$@"; do keys+=("${kv%%=*}"); done
  {
    grep -vE "^($(IFS='|'; echo "${keys[*]}"))=" "${env_file}" || true
    printf '%s\n' "$@"
  } >"${env_file}.tmp"
  mv "${env_file}.tmp" "${env_file}"
}
