#!/usr/bin/env bash
# Apply the series onto the current branch of a clone of upstream Karmada, the way it
# will be submitted, and run that tree's own verification:
#   make upstream-series KARMADA_SRC=/path/to/karmada
# Each patch is applied with `git am --3way`; on a conflict the patch and the conflicting
# files are named and the am is aborted, leaving the clone as it was. On success, the
# tree's hack/verify-codegen.sh, verify-crdgen.sh, verify-swagger-docs.sh,
# verify-import-aliases.sh, verify-gofmt.sh and the unit tests of the touched packages run.
# UPSTREAM_SERIES_APPLY_ONLY=1 stops after applying.
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

[[ -n "${KARMADA_SRC:-}" ]] || die "set KARMADA_SRC to a clone of upstream Karmada (for example: make upstream-series KARMADA_SRC=\$HOME/src/karmada)"
target="$(cd "${KARMADA_SRC}" && pwd -P)"
[[ -d "${target}/.git" || -f "${target}/.git" ]] || die "${target} is not a git clone"
[[ -z "$(git -C "${target}" status --porcelain --untracked-files=no)" ]] || die "${target} has uncommitted changes; commit or stash them first"
branch="$(git -C "${target}" rev-parse --abbrev-ref HEAD)"
base="$(git -C "${target}" rev-parse HEAD)"
log::step "applying $(series::list | wc -l) patches onto ${branch} ($(git -C "${target}" describe --tags --always HEAD))"

applied() { log::ok "$1"; }
if ! series::am "${target}" applied; then
  git -C "${target}" reset --quiet --hard "${base}"
  die "patch ${SERIES_FAILED} does not apply onto ${branch}; ${target} was reset to where it was"
fi

# The stored series carries a neutral identity (a DCO sign-off, no person). Submitted
# commits carry the submitter's: with user.name and user.email set in the clone (or
# globally), every applied commit is re-authored and signed off by that identity, and
# the neutral sign-off is dropped. UPSTREAM_SERIES_KEEP_IDENTITY=1 keeps the neutral one.
name="$(git -C "${target}" config user.name || true)"
email="$(git -C "${target}" config user.email || true)"
if [[ "${UPSTREAM_SERIES_KEEP_IDENTITY:-0}" == 1 ]]; then
  log::step "commits keep the series' neutral identity (UPSTREAM_SERIES_KEEP_IDENTITY=1)"
elif [[ -z "${name}" || -z "${email}" ]]; then
  log::step "no git identity (user.name, user.email) in ${target}: commits keep the neutral identity; set yours and run again to sign them"
else
  neutral="Signed-off-by: ${GIT_COMMITTER_NAME} <${GIT_COMMITTER_EMAIL}>"
  if ! out="$(GIT_COMMITTER_NAME="${name}" GIT_COMMITTER_EMAIL="${email}" git -C "${target}" rebase --quiet \
        --exec "git log -1 --format=%B | grep -vxF '${neutral}' | git commit --quiet --amend --no-verify --reset-author --signoff -F -" \
        "${base}" 2>&1)"; then
    git -C "${target}" rebase --abort >/dev/null 2>&1 || true
    printf '%s\n' "${out}" | tail -n 15 >&2
    die "re-signing the commits as ${name} <${email}> failed"
  fi
  log::ok "re-authored and signed off $(git -C "${target}" rev-list --count "${base}..HEAD") commits as ${name} <${email}>"
fi
[[ "${UPSTREAM_SERIES_APPLY_ONLY:-0}" == 1 ]] && exit 0

cd "${target}" || exit 1
for s in verify-codegen.sh verify-crdgen.sh verify-swagger-docs.sh verify-import-aliases.sh verify-gofmt.sh; do
  [[ -x "hack/${s}" ]] || { log::step "hack/${s} not in this tree, skipped"; continue; }
  start=${SECONDS}
  log="${OUTPUT}/logs/upstream-series-${s%.sh}.log"
  mkdir -p "$(dirname "${log}")"
  if ! GOBIN="${OUTPUT}/tools/bin" PATH="${OUTPUT}/tools/bin:${PATH}" "hack/${s}" >"${log}" 2>&1; then
    tail -n 30 "${log}" >&2
    die "hack/${s} failed in ${target} (log: ${log#"${ROOT}"/})"
  fi
  log::ok "hack/${s} ($((SECONDS - start))s)"
done
mapfile -t pkgs < <(git diff --name-only "${base}" HEAD -- '*.go' | xargs -r -n1 dirname | sort -u | sed 's|^|./|')
go test -count=1 "${pkgs[@]}"
log::ok "series applied and verified on ${branch} of ${target}"
