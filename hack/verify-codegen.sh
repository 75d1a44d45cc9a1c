#!/usr/bin/env bash
# Copyright The Karmada Failover Lab Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# Check that the generated code and CRDs under apis/ are up to date with the
# hand-written types, whether or not they are committed: copy the module's
# go.mod, go.sum, hack/ and apis/ into a temporary directory, run
# hack/update-codegen.sh there, and diff -r the result against apis/.
# The work tree is never modified.
#
# Usage: hack/verify-codegen.sh

set -o errexit
set -o nounset
set -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
export TOOLS_BIN="${TOOLS_BIN:-${ROOT}/_output/tools/bin}"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/verify-codegen.XXXXXX")"
trap 'rm -rf "${tmp}"' EXIT

cp "${ROOT}/go.mod" "${ROOT}/go.sum" "${tmp}/"
mkdir -p "${tmp}/hack"
cp "${ROOT}/hack/update-codegen.sh" "${ROOT}/hack/boilerplate.go.txt" "${tmp}/hack/"
cp -a "${ROOT}/apis" "${tmp}/apis"

if ! "${tmp}/hack/update-codegen.sh" > "${tmp}/update-codegen.log" 2>&1; then
  cat "${tmp}/update-codegen.log" >&2
  echo "verify-codegen: hack/update-codegen.sh failed" >&2
  exit 1
fi

if ! diff -r -u "${ROOT}/apis" "${tmp}/apis"; then
  echo >&2
  echo "verify-codegen: generated files under apis/ are stale (diff above: work tree vs regenerated)." >&2
  echo "verify-codegen: run hack/update-codegen.sh and include the result." >&2
  exit 1
fi
echo "verify-codegen: generated files under apis/ are up to date."
