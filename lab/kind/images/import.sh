# shellcheck shell=bash disable=SC2154
# Shell functions of the kind lab's image scripts (sourced; they set work, a
# temporary folder, before calling them).

# import_binary IMAGE BINARY PATH [docker import --change ...]: an image of one
# static binary at PATH, labelled with the binary's and the changes' digest; an
# image with that label already is kept (rebuilt only when its input changes).
import_binary() {
  local image="$1" binary="$2" path="$3" digest have
  shift 3
  [[ -x "${binary}" ]] || die "${binary#"${ROOT}"/} is missing (make build, make lab-binaries, make kyverno)"
  if ! file "${binary}" 2>/dev/null | grep -q 'statically linked'; then
    file "${binary}" >/dev/null 2>&1 && die "${binary#"${ROOT}"/} is not statically linked: an image of it alone cannot run it"
  fi
  digest="$( { sha256sum <"${binary}"; echo "${path} $*"; } | sha256sum | cut -c1-32)"
  have="$(docker image inspect -f '{{index .Config.Labels "lab.karmada.io/source"}}' "${image}" 2>/dev/null || true)"
  if [[ "${have}" == "${digest}" ]]; then
    echo "${image}"
    return
  fi
  rm -rf "${work}/img"
  install -D -m 0755 "${binary}" "${work}/img${path}"
  tar -C "${work}/img" --owner=0 --group=0 -c . |
    docker import --change "LABEL lab.karmada.io/source=${digest}" "$@" - "${image}" >/dev/null
  echo "${image}"
}
