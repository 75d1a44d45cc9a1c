/*
Copyright The Karmada Failover Lab Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package v1alpha2 is a read-only, trimmed-down copy of the work.karmada.io/v1alpha2
// API of the patched Karmada tree (upstream v1.18.2 plus the FailoverHistory series).
//
// It declares ResourceBinding and ClusterResourceBinding with only the fields that
// the e2e suite and the lab tools read, under the same JSON names as upstream, so
// that they can read bindings, including status.failoverHistory, without importing
// the patched tree.
//
// Because the types carry a subset of the fields, an object decoded into them and
// written back would silently drop every field they do not declare. The generated
// clientset is therefore read-only on purpose (+genclient:onlyVerbs=get,list,watch):
// never add write verbs here, and never install the CRDs generated from this
// package (apis/crds) into a cluster; they exist only to check this package against
// the upstream schema (see drift_test.go).
//
// +k8s:deepcopy-gen=package
// +groupName=work.karmada.io
package v1alpha2
