#!/usr/bin/env bash
# Preflight of the kind lab (LAB_PROVIDER=kind make lab-up): fails within seconds,
# naming what is missing, before anything is built. Checks a Docker engine that
# answers, then the host tools the lab builds its images with (Java 17+ and Maven for
# the Flink job jar, make for upstream Karmada's image build).
set -o errexit -o nounset -o pipefail

fail() {
  echo "ERROR: $*" >&2
  echo "       Without Docker, run the hermetic lab instead: make lab-up (no LAB_PROVIDER)." >&2
  exit 1
}

command -v docker >/dev/null 2>&1 ||
  fail "the kind lab needs Docker, and there is no docker command on PATH. Install Docker Engine (Linux) or Docker Desktop, then start it."
errfile="$(mktemp)"
trap 'rm -f "${errfile}"' EXIT
if ! out="$(timeout 10 docker info --format '{{.ServerVersion}} {{.MemTotal}} {{.NCPU}}' 2>"${errfile}")"; then
  fail "the kind lab needs a running Docker engine, and 'docker info' reached none within 10s: $(grep -m 1 . "${errfile}" || echo "timed out")"
fi
read -r server mem cpus <<<"${out}"
if [[ ! "${server}" =~ ^[0-9] ]]; then
  fail "the kind lab needs a running Docker engine; 'docker info' answered without a server version: ${out}"
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
