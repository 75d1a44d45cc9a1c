#!/usr/bin/env bash
# Build the lab's Flink job (lab/flink) with Maven: jars come from Maven Central,
# versions pinned in lab/flink/pom.xml. Skipped when the jar is newer than every
# source file; FORCE=1 rebuilds. Without java/mvn the lab runs without Flink and
# says so (hack/install-prereqs.sh installs them on Debian/Ubuntu as root).
# --test (make test-flink): build and run the Java tests (restore without loss on a
# MiniCluster, the s3:// file system against a fake store); java and mvn required.
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

dir="${ROOT}/lab/flink"
jar="${dir}/target/failover-lab-flink-job.jar"
tests=0
[[ "${1:-}" == --test ]] && tests=1
if ! command -v mvn >/dev/null || ! command -v java >/dev/null; then
  [[ ${tests} == 1 ]] && die "java or mvn not found: the Flink job's tests need them (Debian/Ubuntu: apt-get install openjdk-17-jdk-headless maven)"
  log::step "java or mvn not found: the lab will run without Flink"
  exit 0
fi
if [[ ${tests} == 1 ]]; then
  mkdir -p "${OUTPUT}/logs"
  log="${OUTPUT}/logs/test-flink-job.log"
  start=${SECONDS}
  if ! (cd "${dir}" && mvn -B package) >"${log}" 2>&1; then
    grep -E "Tests run:|FAIL|ERROR" "${log}" | head -n 30 >&2
    die "the Flink job's tests failed; log: ${log#"${ROOT}"/}"
  fi
  grep -E "^\[(INFO|WARNING)\] Tests run:.*-- in " "${log}" | sed -E 's/^\[(INFO|WARNING)\] /  /'
  log::ok "Flink job tests and jar ($((SECONDS - start))s)"
  exit 0
fi
if [[ "${FORCE:-0}" != 1 && -f "${jar}" && -f "${dir}/target/failover-lab-flink-job-thin.jar" &&
      -z "$(find "${dir}/pom.xml" "${dir}/src/main" -newer "${jar}" -print -quit)" ]]; then
  log::ok "Flink job jar is up to date ($(basename "${jar}"))"
  exit 0
fi
mkdir -p "${OUTPUT}/logs"
log="${OUTPUT}/logs/build-flink-job.log"
start=${SECONDS}
if ! (cd "${dir}" && mvn -B -q package -DskipTests) >"${log}" 2>&1; then
  tail -n 20 "${log}" >&2
  die "building the Flink job failed; log: ${log#"${ROOT}"/}"
fi
log::ok "Flink job jar ($((SECONDS - start))s)"
