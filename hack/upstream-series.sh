#!/usr/bin/env bash
# Apply the series onto the current branch of a clone of upstream Karmada (master, or a
# release branch), pull request by pull request, the way it will be submitted, and run
# that tree's own checks:
#   make upstream-series KARMADA_SRC=/path/to/karmada [UPSTREAM_GITHUB_USER=<your handle>]
#
# - The patches are applied with `git am --3way`. They are made against the pinned
#   v1.18.2; the blobs of the series' own tree are fetched into the clone first, so the
#   3-way fallback has what it needs on a newer base. On a conflict the patch and its
#   files are named, the am is aborted and the clone is reset to where it was. A commit
#   that carries generated files gets them from the tree's own generators (which differ
#   between releases), amended into it.
# - The pull requests are the sections of patches/series (hack/series-prs); each is
#   reported with its patches, and the whole tree is built after each one.
# - Submission identity: every applied commit is re-authored and signed off (DCO) by the
#   clone's git identity (user.name, user.email), and the neutral sign-off of the stored
#   series is dropped. UPSTREAM_GITHUB_USER fills the gate owner and the proposal author,
#   which the stored series names @failover-history-submitter. UPSTREAM_SERIES_KEEP_IDENTITY=1
#   keeps the neutral identity.
# - Then: go build ./..., the tree's hack/verify-codegen.sh, verify-crdgen.sh,
#   verify-swagger-docs.sh, verify-command-line-flags.sh, verify-import-aliases.sh,
#   verify-gofmt.sh, verify-staticcheck.sh (golangci-lint at the version that script pins,
#   built from its Go module into _output/tools) and the unit tests of the touched
#   packages. UPSTREAM_SERIES_APPLY_ONLY=1 stops after applying; UPSTREAM_SERIES_SKIP_LINT=1
#   skips golangci-lint.
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

SUBMITTER_TOKEN="@failover-history-submitter"

[[ -n "${KARMADA_SRC:-}" ]] || die "set KARMADA_SRC to a clone of upstream Karmada (for example: make upstream-series KARMADA_SRC=\$HOME/src/karmada)"
target="$(cd "${KARMADA_SRC}" && pwd -P)"
[[ -d "${target}/.git" || -f "${target}/.git" ]] || die "${target} is not a git clone"
[[ -z "$(git -C "${target}" status --porcelain --untracked-files=no)" ]] || die "${target} has uncommitted changes; commit or stash them first"
branch="$(git -C "${target}" rev-parse --abbrev-ref HEAD)"
base="$(git -C "${target}" rev-parse HEAD)"
start_all=${SECONDS}

# The 3-way fallback of `git am` needs the preimage blobs the patches name.
"${ROOT}/hack/series-tree.sh" >/dev/null
git -C "${target}" fetch --quiet --no-tags "${SERIES_DIR}" HEAD || die "could not fetch the objects of ${SERIES_DIR#"${ROOT}"/} into ${target}"

log::step "applying $(series::list | wc -l) patches onto ${branch} ($(git -C "${target}" describe --tags --always HEAD))"
export GOBIN="${OUTPUT}/tools/bin" PATH="${OUTPUT}/tools/bin:${PATH}"
mkdir -p "${OUTPUT}/logs"
in_pr=0
regenerated=()
generated="zz_generated|^pkg/generated/|^api/openapi-spec/|^charts/karmada/_crds/"
flagdocs="^docs/command-line-flags/"
# A commit that carries generated files carries them as this tree's generators make them:
# generators differ between releases (openapi defaults, flag lists), so the generated files of
# the pinned base are regenerated here with the tree's own scripts and the commit amended. Only
# generated files change; a source commit that needs regeneration fails verify-codegen below.
regenerate() {
  local changed scripts=() s
  changed="$(git -C "${target}" diff --name-only HEAD~1 HEAD)"
  grep -qE "${generated}" <<<"${changed}" && scripts+=(update-codegen.sh update-crdgen.sh update-swagger-docs.sh)
  grep -qE "${flagdocs}" <<<"${changed}" && scripts+=(update-command-line-flags.sh)
  [[ ${#scripts[@]} -gt 0 ]] || return 0
  for s in "${scripts[@]}"; do
    [[ -x "${target}/hack/${s}" ]] || continue
    (cd "${target}" && "hack/${s}") >"${OUTPUT}/logs/upstream-series-regenerate.log" 2>&1 ||
      { tail -n 30 "${OUTPUT}/logs/upstream-series-regenerate.log" >&2; return 1; }
  done
  if [[ -n "$(git -C "${target}" status --porcelain)" ]]; then
    git -C "${target}" add -A && git -C "${target}" -c user.name="${GIT_COMMITTER_NAME}" -c user.email="${GIT_COMMITTER_EMAIL}" \
      commit --quiet --amend --no-edit --no-verify
    regenerated+=("$1: $(git -C "${target}" diff --name-only HEAD~1 HEAD | grep -cE "${generated}|${flagdocs}") generated files")
  fi
}
applied() {
  in_pr=$((in_pr + 1))
  regenerate "$1" || { git -C "${target}" reset --quiet --hard "${base}"; die "regenerating the generated files of $1 failed; ${target} was reset"; }
}
pr_done() {
  local id="$1" title="$2" start="$3"
  if ! out="$(cd "${target}" && go build ./... 2>&1)"; then
    printf '%s\n' "${out}" | tail -n 20 >&2
    git -C "${target}" reset --quiet --hard "${base}"
    die "${id} does not build on ${branch}; ${target} was reset to where it was"
  fi
  log::ok "${id}: ${title} (${in_pr} patches, builds; $((SECONDS - start))s)"
  in_pr=0
}
# Apply PR by PR: patches/series lists each PR's patches followed by '# end of PRn: title'.
one="$(mktemp)"
trap 'rm -f "${one}"' EXIT
pr_start=${SECONDS}
while IFS= read -r line; do
  if [[ "${line}" =~ ^#\ end\ of\ (PR[0-9]+):\ (.*)$ ]]; then
    pr_done "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "${pr_start}"
    pr_start=${SECONDS}
    continue
  fi
  [[ "${line}" =~ ^[[:space:]]*(#|$) ]] && continue
  echo "${line}" > "${one}"
  if ! SERIES_FILE="${one}" series::am "${target}" applied; then
    git -C "${target}" reset --quiet --hard "${base}"
    die "patch ${SERIES_FAILED} does not apply onto ${branch}; ${target} was reset to where it was"
  fi
done < "${SERIES_FILE}"
[[ ${in_pr} == 0 ]] || pr_done "the last patches" "not in a pull request of hack/series-prs" "${pr_start}"
for r in "${regenerated[@]}"; do log::step "regenerated with this tree's scripts: ${r}"; done
n="$(git -C "${target}" rev-list --count "${base}..HEAD")"
[[ "${n}" == "$(series::list | wc -l)" ]] || die "${n} commits applied, but the series has $(series::list | wc -l) patches"

# The stored series carries a neutral identity (a DCO sign-off, no person). Submitted
# commits carry the submitter's.
name="$(git -C "${target}" config user.name || true)"
email="$(git -C "${target}" config user.email || true)"
if [[ "${UPSTREAM_SERIES_KEEP_IDENTITY:-0}" == 1 ]]; then
  log::step "commits keep the series' neutral identity (UPSTREAM_SERIES_KEEP_IDENTITY=1)"
elif [[ -z "${name}" || -z "${email}" ]]; then
  log::step "no git identity (user.name, user.email) in ${target}: commits keep the neutral identity; set yours and run again to sign them"
else
  neutral="Signed-off-by: ${GIT_COMMITTER_NAME} <${GIT_COMMITTER_EMAIL}>"
  fill=":"
  if [[ -n "${UPSTREAM_GITHUB_USER:-}" ]]; then
    handle="@${UPSTREAM_GITHUB_USER#@}"
    fill="files=\$(git grep -l -F -e '${SUBMITTER_TOKEN}' -- docs/proposals pkg/features || true); if [ -n \"\$files\" ]; then sed -i 's/${SUBMITTER_TOKEN}/${handle}/g' \$files && git add \$files; fi"
  fi
  if ! out="$(GIT_COMMITTER_NAME="${name}" GIT_COMMITTER_EMAIL="${email}" git -C "${target}" rebase --quiet \
        --exec "${fill}; git log -1 --format=%B | grep -vxF '${neutral}' | git commit --quiet --amend --no-verify --reset-author --signoff -F -" \
        "${base}" 2>&1)"; then
    git -C "${target}" rebase --abort >/dev/null 2>&1 || true
    printf '%s\n' "${out}" | tail -n 15 >&2
    git -C "${target}" reset --quiet --hard "${base}"
    die "re-signing the commits as ${name} <${email}> failed; ${target} was reset to where it was"
  fi
  log::ok "re-authored and signed off $(git -C "${target}" rev-list --count "${base}..HEAD") commits as ${name} <${email}>"
fi
if git -C "${target}" grep -q -F -e "${SUBMITTER_TOKEN}" -- docs/proposals pkg/features; then
  log::step "the gate owner and proposal authors still read ${SUBMITTER_TOKEN}: set UPSTREAM_GITHUB_USER=<your GitHub handle> before submitting"
fi
[[ "${UPSTREAM_SERIES_APPLY_ONLY:-0}" == 1 ]] && exit 0

cd "${target}" || exit 1
checks=(verify-codegen.sh verify-crdgen.sh verify-swagger-docs.sh verify-command-line-flags.sh verify-import-aliases.sh verify-gofmt.sh)
if [[ "${UPSTREAM_SERIES_SKIP_LINT:-0}" != 1 && -x hack/verify-staticcheck.sh ]]; then
  # golangci-lint at the version upstream's script pins, from its Go module (the script would
  # otherwise download a release binary).
  ver="$(sed -n 's/^GOLANGCI_LINT_VER="\(v[0-9.]*\)"$/\1/p' hack/verify-staticcheck.sh)"
  [[ -n "${ver}" ]] || die "hack/verify-staticcheck.sh pins no GOLANGCI_LINT_VER this script can read"
  lintdir="${OUTPUT}/tools/golangci-lint-${ver}"
  if [[ ! -x "${lintdir}/golangci-lint" ]]; then
    log::step "building golangci-lint ${ver} from its Go module"
    GOBIN="${lintdir}" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@${ver}" || die "could not build golangci-lint ${ver}"
  fi
  export PATH="${lintdir}:${PATH}"
  checks+=(verify-staticcheck.sh)
fi
for s in "${checks[@]}"; do
  [[ -x "hack/${s}" ]] || { log::step "hack/${s} not in this tree, skipped"; continue; }
  start=${SECONDS}
  log="${OUTPUT}/logs/upstream-series-${s%.sh}.log"
  if ! "hack/${s}" >"${log}" 2>&1; then
    tail -n 30 "${log}" >&2
    die "hack/${s} failed in ${target} (log: ${log#"${ROOT}"/})"
  fi
  [[ -z "$(git status --porcelain --untracked-files=no)" ]] || { git status --short >&2; die "hack/${s} changed files in ${target}: the series' generated files are not what this tree generates"; }
  log::ok "hack/${s} ($((SECONDS - start))s)"
done
mapfile -t pkgs < <(series::packages "${base}..HEAD" | series::unit_packages)
mapfile -t e2e < <(series::packages "${base}..HEAD" | series::e2e_packages)
start=${SECONDS}
# Karmada's e2e suites run against a Karmada (make upstream-e2e): compiled and vetted here.
[[ ${#e2e[@]} -eq 0 ]] || go vet "${e2e[@]}" || die "the e2e suites the series touches do not compile or vet on ${branch}"
go test -count=1 "${pkgs[@]}"
log::ok "unit tests of the ${#pkgs[@]} touched packages, ${#e2e[@]} e2e packages vetted ($((SECONDS - start))s)"
log::ok "series applied and verified on ${branch} of ${target} in $((SECONDS - start_all))s"
