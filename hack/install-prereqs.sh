#!/usr/bin/env bash
# Check (and where possible install) what the project needs on a fresh machine:
# Go (the toolchain go.mod asks for; Go fetches it through the module proxy when the
# installed one is older), git, make, shellcheck (Debian package), and a C-free build
# (CGO is off everywhere).
# Everything else - upstream Karmada, code generators, controller-gen - comes from
# the Go module proxy through the project's own scripts.
# With --kind (or LAB_PROVIDER=kind), also what the kind lab builds its images and
# runs its Docker engine with: Debian's docker.io (dockerd, containerd, runc; the
# engine is not started or configured here - the lab uses the machine's engine when
# it runs privileged containers and otherwise runs its own, lab/kind/engine),
# debootstrap and gcc (the node image), iproute2 (the lab's bridge); as root it
# raises the inotify limits kind needs (for this boot only).
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

kind=false
[[ "${1:-}" == --kind || "${LAB_PROVIDER:-}" == kind ]] && kind=true
need_apt=()
command -v git >/dev/null || need_apt+=(git)
command -v make >/dev/null || need_apt+=(make)
command -v diff >/dev/null || need_apt+=(diffutils)
# make verify-kind-lab (part of make test) runs shellcheck on every script.
command -v shellcheck >/dev/null || need_apt+=(shellcheck)
# make test-flink (part of make test) runs the Flink job's Java tests; the lab's
# Flink part (make lab-up, make flink-demo) runs the job: Java 17+ and Maven.
command -v java >/dev/null || need_apt+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || need_apt+=(maven)
if ${kind}; then
  # A Docker engine that answers (a laptop's) is enough; otherwise dockerd for the lab's own.
  if ! command -v dockerd >/dev/null && ! { command -v docker >/dev/null && docker info >/dev/null 2>&1; }; then
    need_apt+=(docker.io)
  fi
  command -v debootstrap >/dev/null || need_apt+=(debootstrap)
  command -v gcc >/dev/null || need_apt+=(gcc libc6-dev)
  command -v ip >/dev/null || need_apt+=(iproute2)
fi
if ${kind} && [[ "$(id -u)" == 0 && -w /proc/sys/fs/inotify/max_user_instances ]]; then
  # Four kind clusters exhaust Linux's default inotify limits (kind's "too many
  # open files"); raised for this boot only, as lab/kind/preflight.sh asks.
  (($(cat /proc/sys/fs/inotify/max_user_instances) >= 512)) || sysctl -q -w fs.inotify.max_user_instances=512
  (($(cat /proc/sys/fs/inotify/max_user_watches) >= 524288)) || sysctl -q -w fs.inotify.max_user_watches=524288
fi
if [[ ${#need_apt[@]} -gt 0 ]]; then
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    log::step "installing ${need_apt[*]} with apt-get"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    die "missing ${need_apt[*]}; install them with your package manager"
  fi
fi
command -v go >/dev/null || die "Go is required (>= the version in go.mod); install it from your distribution or go.dev/dl"
java_major="$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = \([0-9]*\).*/\1/p')"
[[ "${java_major:-0}" -ge 17 ]] || die "Java ${java_major:-?} found; the Flink job needs Java 17 or newer (Debian/Ubuntu: apt-get install openjdk-17-jdk-headless)"
# GOTOOLCHAIN=auto (Go's default) switches to the toolchain go.mod needs if the installed one is older.
log::ok "prerequisites: $(go version | awk '{print $3}'), git $(git --version | awk '{print $3}'), $(make --version | head -1), shellcheck $(shellcheck --version | awk '/^version/ {print $2}'), Java ${java_major}, $(mvn -B -v 2>/dev/null | sed -n 's/^.*\(Apache Maven [0-9.]*\).*/\1/p' | head -1)"
