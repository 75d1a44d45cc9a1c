#!/usr/bin/env bash
# Prepare _output/series/karmada: the pinned upstream tag with patches/ applied by
# `git am --3way`, exactly as a maintainer would apply the series. Skips the work when
# the tree already carries the current series and is clean.
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

"${ROOT}/hack/src.sh" >/dev/null
VERSION="$(karmada::version)"
want="$(series::hash)"
stamp="${SERIES_DIR}/.git/failover-lab-series"

if [[ -f "${stamp}" && "$(cat "${stamp}")" == "${want} $(git -C "${SERIES_DIR}" rev-parse HEAD 2>/dev/null)" &&
      -z "$(git -C "${SERIES_DIR}" status --porcelain)" ]]; then
  log::ok "series tree already at series ${want}"
  exit 0
fi

tree::checkout "${SERIES_DIR}" "refs/tags/${VERSION}"
series::am "${SERIES_DIR}" || die "patches/${SERIES_FAILED} does not apply onto upstream ${VERSION}"
n="${SERIES_APPLIED}"
echo "${want} $(git -C "${SERIES_DIR}" rev-parse HEAD)" > "${stamp}"
log::ok "series tree: ${n} patches applied onto ${VERSION} (series ${want})"
