#!/usr/bin/env bash
# Check that every commit of the series builds, is gofmt-ed, passes the unit tests of the
# packages it touches and, when it changes flags or feature gates, upstream's
# hack/verify-command-line-flags.sh, on its own (so that the series can be bisected and merged
# in parts).
# Works in a scratch clone, _output/bisect/karmada. Slow: not part of `make test`.
# BISECT_FROM=N checks commits N.. of the series only (for example the commits added since the
# last full check).
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

VERSION="$(karmada::version)"
"${ROOT}/hack/series-tree.sh" >/dev/null
BISECT_DIR="${OUTPUT}/bisect/karmada"
if [[ ! -d "${BISECT_DIR}/.git" ]]; then
  mkdir -p "$(dirname "${BISECT_DIR}")"
  git clone --quiet --no-checkout "${SERIES_DIR}" "${BISECT_DIR}"
fi
git -C "${BISECT_DIR}" fetch --quiet --tags "${SERIES_DIR}" "+HEAD:refs/heads/series"
cd "${BISECT_DIR}" || exit 1

failed=0
while read -r sha; do
  subject="$(git log -1 --format=%s "${sha}")"
  git checkout --quiet --force --detach "${sha}"
  git clean --quiet -fdx
  start=${SECONDS}
  mapfile -t pkgs < <(series::packages "${sha}^..${sha}" | series::unit_packages)
  mapfile -t e2e < <(series::packages "${sha}^..${sha}" | series::e2e_packages)
  if ! go build ./... >/tmp/bisect-build.log 2>&1; then
    log::err "${subject}: does not build"; tail -n 20 /tmp/bisect-build.log >&2; failed=1; continue
  fi
  # Karmada's e2e suites run against a Karmada (make upstream-e2e): compiled and vetted here.
  if [[ ${#e2e[@]} -gt 0 ]] && ! go vet "${e2e[@]}" >/tmp/bisect-test.log 2>&1; then
    log::err "${subject}: e2e suite does not compile or vet"; tail -n 20 /tmp/bisect-test.log >&2; failed=1; continue
  fi
  if [[ ${#pkgs[@]} -gt 0 ]] && ! go test -count=1 "${pkgs[@]}" >/tmp/bisect-test.log 2>&1; then
    log::err "${subject}: tests fail"; grep -E '^(---|FAIL|ok)' /tmp/bisect-test.log | head -n 20 >&2; failed=1; continue
  fi
  mapfile -t gofiles < <(git diff --name-only --diff-filter=d "${sha}^" "${sha}" -- '*.go')
  if [[ ${#gofiles[@]} -gt 0 ]] && [[ -n "$(gofmt -l "${gofiles[@]}")" ]]; then
    log::err "${subject}: not gofmt-ed: $(gofmt -l "${gofiles[@]}" | tr '\n' ' ')"; failed=1; continue
  fi
  # A commit that changes flags or feature gates carries its regenerated flag reference.
  checks=""
  if [[ -n "$(git diff --name-only "${sha}^" "${sha}" -- cmd pkg/features)" ]] && [[ -x hack/verify-command-line-flags.sh ]]; then
    if ! GOBIN="${OUTPUT}/tools/bin" PATH="${OUTPUT}/tools/bin:${PATH}" hack/verify-command-line-flags.sh >/tmp/bisect-verify.log 2>&1; then
      log::err "${subject}: hack/verify-command-line-flags.sh fails"; tail -n 20 /tmp/bisect-verify.log >&2; failed=1; continue
    fi
    checks=", command-line flags verified"
  fi
  [[ ${#e2e[@]} -gt 0 ]] && checks+=", ${#e2e[@]} e2e packages vetted"
  log::ok "${subject} ($((SECONDS - start))s, ${#pkgs[@]} packages tested${checks})"
done < <(git rev-list --reverse "refs/tags/${VERSION}..refs/heads/series" | tail -n "+${BISECT_FROM:-1}")
[[ ${failed} == 0 ]] || die "some commits of the series do not build or pass their tests alone"
log::ok "every commit of the series builds and passes its package tests alone"
