#!/usr/bin/env bash
# Verify the patch series in the series tree (_output/series/karmada):
#   1. it applies with `git am --3way` onto the pristine upstream tag;
#   2. every commit carries Signed-off-by;
#   3. patches/ is what `make extract` produces from it (reproducible, not hand-edited);
#   4. the generated code, CRDs, swagger and flag docs are fresh: upstream's
#      update-codegen/crdgen/swagger-docs/command-line-flags scripts leave no diff;
#   5. gofmt and go vet are clean on the touched packages;
#   6. upstream's unit tests of every package the series touches pass.
# VERIFY_SKIP_GENERATE=1 skips step 4 (for a quick local loop; CI never sets it).
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

VERSION="$(karmada::version)"
"${ROOT}/hack/series-tree.sh"
cd "${SERIES_DIR}"
range="refs/tags/${VERSION}..HEAD"

# 2. DCO
series::require_signoff "${SERIES_DIR}" "${range}"
log::ok "every commit of the series is signed off ($(git rev-list --count "${range}") commits)"

# 3. reproducible extraction
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
SRC_DIR="${SERIES_DIR}" PATCH_BRANCH=verify-extract PATCHES_DIR="${tmp}/patches" SERIES_FILE="${tmp}/patches/series" \
  bash -c 'git -C "$0" branch -f verify-extract HEAD && "$1/hack/extract.sh"' "${SERIES_DIR}" "${ROOT}" 2>/dev/null
git -C "${SERIES_DIR}" branch -D verify-extract >/dev/null
if ! diff -r "${tmp}/patches" "${PATCHES_DIR}" >"${tmp}/extract.diff"; then
  head -n 40 "${tmp}/extract.diff" >&2
  die "patches/ differs from what 'make extract' produces; never edit .patch files by hand (edit _output/src/karmada, then make extract)"
fi
log::ok "patches/ is exactly what make extract produces"

# 4. generated files are fresh
if [[ "${VERIFY_SKIP_GENERATE:-0}" != 1 ]]; then
  "${ROOT}/hack/generate.sh" "${SERIES_DIR}"
  if [[ -n "$(git status --porcelain)" ]]; then
    git status --short | head -n 30 >&2
    git diff --stat | tail -n 5 >&2
    die "generated files are stale in the series; run 'make generate' in _output/src/karmada, commit the result in the generated commit, then 'make extract'"
  fi
  log::ok "generated code, CRDs, swagger and flag docs are fresh"
fi

# 5/6. touched packages
mapfile -t pkgs < <(series::packages "${range}")
mapfile -t unit < <(series::packages "${range}" | series::unit_packages)
mapfile -t gofiles < <(git diff --name-only --diff-filter=AM "${range}" -- '*.go')
if [[ ${#gofiles[@]} -gt 0 ]]; then
  unformatted="$(gofmt -l "${gofiles[@]}")"
  [[ -z "${unformatted}" ]] || die "gofmt: ${unformatted}"
fi
log::ok "gofmt clean on ${#gofiles[@]} files"
go vet "${pkgs[@]}"
log::ok "go vet clean on ${#pkgs[@]} packages"
# go vet compiled the e2e suites' packages (test/e2e/...): they run against a Karmada (make upstream-e2e).
echo "upstream unit tests of the ${#unit[@]} packages the series touches (e2e suites: compiled and vetted only):" >&2
go test -count=1 -timeout 20m "${unit[@]}"
