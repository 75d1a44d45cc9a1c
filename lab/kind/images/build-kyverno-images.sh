#!/usr/bin/env bash
# Build the images of Kyverno's chart that the kind lab runs with LAB_IMAGES=build
# and LAB_RESTORE=kyverno (or when the e2e suite switches the members to Kyverno):
# the admission controller and its init container, from the binaries make kyverno
# built from Kyverno's Go module, under the names the chart gives them
# (reg.kyverno.io/kyverno/kyverno and .../kyvernopre at the module's version), at
# /ko-app/<name> as Kyverno's own images have them. The chart's other controllers,
# hooks and test pod are turned off (lab/kind/manifests/kyverno-values.yaml).
# Usage: build-kyverno-images.sh KYVERNO_DIR (_output/bin/kyverno-<version>).
# Prints the image references.
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../hack/lib/init.sh"

dir="${1:?usage: build-kyverno-images.sh KYVERNO_DIR}"
version="$(sed -n 's/^appVersion: *//p' "${dir}/chart/Chart.yaml" | tr -d '"')"
[[ -n "${version}" ]] || die "${dir#"${ROOT}"/}/chart/Chart.yaml has no appVersion (make kyverno)"

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
# shellcheck source=lab/kind/images/import.sh
source "${ROOT}/lab/kind/images/import.sh"

import_binary "reg.kyverno.io/kyverno/kyverno:${version}" "${dir}/kyverno" /ko-app/kyverno \
  --change 'USER 65532:65532' --change 'ENTRYPOINT ["/ko-app/kyverno"]'
import_binary "reg.kyverno.io/kyverno/kyvernopre:${version}" "${dir}/kyverno-init" /ko-app/kyverno-init \
  --change 'USER 65532:65532' --change 'ENTRYPOINT ["/ko-app/kyverno-init"]'
