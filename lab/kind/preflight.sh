#!/usr/bin/env bash
# Preflight of the kind lab (LAB_PROVIDER=kind make lab-up): fails within seconds,
# naming what is missing, before anything is built. Checks a Docker engine that
# answers, docker buildx, Linux's inotify limits, then the host tools the lab builds
# its images with (Java 17+ and Maven for the Flink job jar, make for upstream
# Karmada's image build). Runs on Linux and macOS (no GNU-only tools).
set -o errexit -o nounset -o pipefail

fail() {
  echo "ERROR: $*" >&2
  echo "       Without Docker, run the hermetic lab instead: make lab-up (no LAB_PROVIDER)." >&2
  exit 1
}

# with_timeout SECONDS CMD...: CMD, killed after SECONDS (GNU timeout is not on macOS).
with_timeout() {
  local secs="$1" pid watcher rc=0
  shift
  "$@" &
  pid=$!
  (
    trap 'kill "${s}" 2>/dev/null; exit 0' TERM
    sleep "${secs}" &
    s=$!
    wait "${s}"
    kill -9 "${pid}" 2>/dev/null
  ) &
  watcher=$!
  wait "${pid}" || rc=$?
  kill -TERM "${watcher}" 2>/dev/null || true
  wait "${watcher}" 2>/dev/null || true
  return "${rc}"
}

command -v docker >/dev/null 2>&1 ||
  fail "the kind lab needs Docker, and there is no docker command on PATH. Install Docker Engine (Linux) or Docker Desktop, then start it."
errfile="$(mktemp)"
trap 'rm -f "${errfile}"' EXIT
if ! out="$(with_timeout 10 docker info --format '{{.ServerVersion}} {{.MemTotal}} {{.NCPU}}' 2>"${errfile}")"; then
  fail "the kind lab needs a running Docker engine, and 'docker info' reached none within 10s: $(grep -m 1 . "${errfile}" || echo "timed out")"
fi
read -r server mem cpus <<<"${out}"
if [[ ! "${server}" =~ ^[0-9] ]]; then
  fail "the kind lab needs a running Docker engine; 'docker info' answered without a server version: ${out}"
fi
# Upstream Karmada's image build passes --provenance=false, which only buildx takes
# (the legacy builder rejects it), and the lab builds its images the same way
# where it pulls the rest (LAB_IMAGES=pull; with build, images are imported).
images="${LAB_IMAGES:-auto}"
if [[ "${images}" == auto ]]; then
  # As lab/kind/images.go decides it: pull where registry.k8s.io answers.
  if with_timeout 5 bash -c ': >/dev/tcp/registry.k8s.io/443' 2>/dev/null; then images=pull; else images=build; fi
fi
if [[ "${images}" == pull ]] && ! with_timeout 10 docker buildx version >/dev/null 2>"${errfile}"; then
  echo "ERROR: the kind lab builds images with docker buildx (upstream's 'make image-*' passes --provenance=false), and 'docker buildx version' failed: $(grep -m 1 . "${errfile}" || echo "no answer")." >&2
  echo "       Docker Desktop ships buildx; on Linux install the docker-buildx-plugin package." >&2
  exit 1
fi
# Four kind clusters exhaust Linux's default inotify limits (kind's known issue
# "too many open files"). On macOS the limits are those of Docker Desktop's VM.
proc="${PREFLIGHT_PROC_ROOT:-/proc}/sys/fs/inotify"
if [[ -r "${proc}/max_user_instances" && -r "${proc}/max_user_watches" ]]; then
  read -r instances <"${proc}/max_user_instances"
  read -r watches <"${proc}/max_user_watches"
  if ((instances < 512 || watches < 524288)); then
    echo "ERROR: the kind lab runs 4 kind clusters, which need more inotify instances and watches than this machine allows (fs.inotify.max_user_instances=${instances}, max_user_watches=${watches}). Raise them:" >&2
    echo "       sudo sysctl fs.inotify.max_user_instances=512 fs.inotify.max_user_watches=524288" >&2
    echo "       (persist them in /etc/sysctl.d/99-kind.conf)" >&2
    exit 1
  fi
fi
for tool in make java mvn; do
  command -v "${tool}" >/dev/null 2>&1 ||
    { echo "ERROR: the kind lab builds the Flink job image and Karmada's images on this machine and needs ${tool} (Debian/Ubuntu: apt-get install make openjdk-17-jdk-headless maven)." >&2; exit 1; }
done
gib=$((mem / 1024 / 1024 / 1024))
if ((gib < 12)); then
  echo "WARNING: Docker has ${gib} GiB of memory; the kind lab (host + members with Karmada, Flink operator, Flink jobs) wants about 12 GiB." >&2
fi
echo "Docker ${server}: ${cpus} CPUs, ${gib} GiB"
