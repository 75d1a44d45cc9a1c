#!/usr/bin/env bash
# Runs `shellcheck -x` on every shell script of the project (make lint).
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

command -v shellcheck >/dev/null || die "shellcheck is missing (hack/install-prereqs.sh installs it; Debian/Ubuntu: apt-get install shellcheck)"
mapfile -t scripts < <(cd "${ROOT}" && { git ls-files -co --exclude-standard '*.sh' .ci/run lab/kind/testdata/shim/docker; ls lab/kind/*.sh hack/*.sh hack/lib/*.sh 2>/dev/null; } | sort -u)
(cd "${ROOT}" && shellcheck -x "${scripts[@]}") || die "shellcheck found problems"
log::ok "shellcheck: ${#scripts[@]} scripts"
