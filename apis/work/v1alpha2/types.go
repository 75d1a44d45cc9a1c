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

package v1alpha2

// The types below mirror github.com/karmada-io/karmada/pkg/apis/work/v1alpha2
// (binding_types.go and well_known_constants.go of the patched tree), keeping only
// the fields the e2e suite and the lab tools read. JSON names, and the kubebuilder
// markers and docs of FailoverReason and FailoverHistoryItem, are copied verbatim
// from upstream; drift_test.go checks the generated schema against upstream's CRDs.
//
// They are read-only: decoding a binding into them and writing it back would drop
// every field not declared here. See the package documentation.

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

const (
	// ResourceKindResourceBinding is kind name of ResourceBinding.
	ResourceKindResourceBinding = "ResourceBinding"
	// ResourcePluralResourceBinding is plural name of ResourceBinding.
	ResourcePluralResourceBinding = "resourcebindings"

	// ResourceKindClusterResourceBinding is kind name of ClusterResourceBinding.
	ResourceKindClusterResourceBinding = "ClusterResourceBinding"
	// ResourcePluralClusterResourceBinding is kind plural of ClusterResourceBinding.
	ResourcePluralClusterResourceBinding = "clusterresourcebindings"
)

// Define the failover marker that is put on a resource propagated to a cluster it was
// failed over to. It requires the FailoverHistory feature gate.
//
// Together with the marker, the preserved state of that failover is put on the resource
// under the alias label name of each state preservation rule: as a label when the value
// is a valid label value, otherwise (for example a path, or a value longer than 63
// characters) as an annotation with the same key.
const (
	// FailoverReasonLabel is added to a resource on the clusters it was failed over to.
	// The value is the reason of the failover that moved it there: ApplicationFailure
	// or ClusterFailure. The label is kept for as long as the resource stays on that
	// cluster and is never added on the clusters the resource was first scheduled to.
	FailoverReasonLabel = "failover.karmada.io/reason"

	// FailoverTimeAnnotation is added together with FailoverReasonLabel. The value is the
	// start time of that failover in RFC3339 form.
	FailoverTimeAnnotation = "failover.karmada.io/time"

	// FailoverFromAnnotation is added together with FailoverReasonLabel. The value is the
	// comma-separated list of the clusters the resource was moved away from.
	FailoverFromAnnotation = "failover.karmada.io/from"

	// FailoverPreservedKeysAnnotation is added together with FailoverReasonLabel when the
	// failover carried preserved state. The value is the sorted, comma-separated list of the
	// label and annotation keys Karmada put the preserved state under. A member-side consumer
	// honours only these keys: a resource template may itself carry a key with the same name
	// as an alias label, which Karmada propagates like any other label.
	FailoverPreservedKeysAnnotation = "failover.karmada.io/preserved-keys"

	// FailoverStateWithheldAnnotation is added together with FailoverReasonLabel while the
	// failover is in progress and the copies on some of the clusters it moved the resource
	// away from are not confirmed stopped: neither is the purge mode Directly nor does the
	// cluster carry the out-of-service taint. The value is the comma-separated list of those
	// clusters. Their preserved state is withheld, and a member-side consumer must not restore
	// the state of the old copy by other means, since that copy may still be running.
	FailoverStateWithheldAnnotation = "failover.karmada.io/state-withheld"
)

// +genclient
// +genclient:onlyVerbs=get,list,watch
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=resourcebindings,scope=Namespaced,shortName=rb,categories={karmada-io}
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="Scheduled")].status`,name="SCHEDULED",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="FullyApplied")].status`,name="FULLYAPPLIED",type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="AGE",type=date

// ResourceBinding represents a binding of a kubernetes resource with a propagation policy.
//
// This is a read-only view that declares only some of upstream's fields: the
// generated client can get, list and watch it but never write it, since writing
// it back would drop the fields not declared here.
type ResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec represents the desired behavior.
	Spec ResourceBindingSpec `json:"spec"`

	// Status represents the most recently observed status of the ResourceBinding.
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// ResourceBindingSpec represents the expectation of ResourceBinding.
// Only the fields read by the lab are declared.
type ResourceBindingSpec struct {
	// Resource represents the Kubernetes resource to be propagated.
	Resource ObjectReference `json:"resource"`

	// Clusters represents target member clusters where the resource to be deployed.
	// +optional
	Clusters []TargetCluster `json:"clusters,omitempty"`

	// GracefulEvictionTasks holds the eviction tasks that are expected to perform
	// the eviction in a graceful way.
	// +optional
	GracefulEvictionTasks []GracefulEvictionTask `json:"gracefulEvictionTasks,omitempty"`
}

// ObjectReference contains enough information to locate the referenced object inside current cluster.
type ObjectReference struct {
	// APIVersion represents the API version of the referent.
	APIVersion string `json:"apiVersion"`

	// Kind represents the Kind of the referent.
	Kind string `json:"kind"`

	// Namespace represents the namespace for the referent.
	// If Namespace is not specified, means the resource is non-namespace scoped.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name represents the name of the referent.
	Name string `json:"name"`

	// UID of the referent.
	// +optional
	UID types.UID `json:"uid,omitempty"`
}

// TargetCluster represents the identifier of a member cluster.
type TargetCluster struct {
	// Name of target cluster.
	Name string `json:"name"`
	// Replicas in target cluster
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
}

// PurgeMode represents how to deal with the legacy application on the
// cluster from which the application is migrated.
type PurgeMode string

// GracefulEvictionTask represents a graceful eviction task.
type GracefulEvictionTask struct {
	// FromCluster which cluster the eviction perform from.
	// +required
	FromCluster string `json:"fromCluster"`

	// PurgeMode represents how to deal with the legacy applications on the
	// cluster from which the application is migrated.
	// Valid options are "Immediately", "Directly", "Graciously", "Gracefully" and "Never".
	// +kubebuilder:validation:Enum=Immediately;Directly;Graciously;Gracefully;Never
	// +optional
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`

	// Reason contains a programmatic identifier indicating the reason for the eviction.
	// +required
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`
	Reason string `json:"reason"`

	// Producer indicates the controller who triggered the eviction.
	// +required
	Producer string `json:"producer"`

	// GracePeriodSeconds is the maximum waiting duration in seconds before the item
	// should be deleted.
	// +optional
	GracePeriodSeconds *int32 `json:"gracePeriodSeconds,omitempty"`

	// SuppressDeletion represents the grace period will be persistent until
	// the tools or human intervention stops it.
	// +optional
	SuppressDeletion *bool `json:"suppressDeletion,omitempty"`

	// PreservedLabelState represents the application state information collected from the original cluster,
	// and it will be injected into the new cluster in form of application labels.
	// +optional
	PreservedLabelState map[string]string `json:"preservedLabelState,omitempty"`

	// CreationTimestamp is a timestamp representing the server time when this object was
	// created.
	// +optional
	CreationTimestamp *metav1.Time `json:"creationTimestamp,omitempty"`

	// ClustersBeforeFailover records the clusters where running the application before failover.
	ClustersBeforeFailover []string `json:"clustersBeforeFailover,omitempty"`
}

// ResourceBindingStatus represents the overall status of the strategy as well as the referenced resources.
// Only the fields read by the lab are declared.
type ResourceBindingStatus struct {
	// SchedulerObservedGeneration is the generation(.metadata.generation) observed by the scheduler.
	// +optional
	SchedulerObservedGeneration int64 `json:"schedulerObservedGeneration,omitempty"`

	// LastScheduledTime representing the latest timestamp when scheduler successfully finished a scheduling.
	// +optional
	LastScheduledTime *metav1.Time `json:"lastScheduledTime,omitempty"`

	// Conditions contain the different condition statuses.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// AggregatedStatus represents status list of the resource running in each member cluster.
	// +optional
	AggregatedStatus []AggregatedStatusItem `json:"aggregatedStatus,omitempty"`

	// FailoverHistory records the most recent failovers of the referencing resource,
	// ordered from the oldest to the newest (the newest item is the last one).
	// Each item records the eviction of the resource from one cluster by application
	// failover, cluster failover or another graceful eviction, also when several clusters
	// fail at once. karmada-controller-manager keeps the number of items it is configured
	// with (5 by default) and drops the oldest beyond that, except the items of graceful
	// eviction tasks that are still on the binding.
	// It is maintained only when the FailoverHistory feature gate is enabled.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	FailoverHistory []FailoverHistoryItem `json:"failoverHistory,omitempty"`
}

// FailoverReason is the reason why the resource was failed over.
// Besides the reasons below, it is the reason of the graceful eviction task, for an
// eviction of another kind (for example a preemption).
type FailoverReason string

const (
	// FailoverReasonApplicationFailure means the resource was moved away from clusters
	// where it had been unhealthy for longer than the toleration of its
	// application failover behavior.
	FailoverReasonApplicationFailure FailoverReason = "ApplicationFailure"

	// FailoverReasonClusterFailure means the resource was moved away from a cluster
	// that carried a NoExecute taint it does not tolerate, typically because the
	// cluster failed.
	FailoverReasonClusterFailure FailoverReason = "ClusterFailure"
)

const (
	// MaxFailoverHistoryItems is the maximum number of items status.failoverHistory holds,
	// whatever the limit karmada-controller-manager is configured with and however many failovers
	// are in progress at once.
	MaxFailoverHistoryItems = 100

	// MaxFailoverHistoryStateValueLength is the maximum length of a preserved state value the
	// failover history records. A longer value stays in the graceful eviction task that preserved
	// it; the history records the key without it and a Warning event reports it.
	MaxFailoverHistoryStateValueLength = 1024
)

// FailoverHistoryItem records one failover of the referencing resource: its eviction
// from one cluster, as one graceful eviction task.
type FailoverHistoryItem struct {
	// StartTime is the time the failover started: the creation timestamp of its graceful
	// eviction task. With FromCluster and Producer it identifies that task.
	// +required
	StartTime metav1.Time `json:"startTime"`

	// Reason is the reason of the failover: ApplicationFailure, ClusterFailure, or the
	// reason of the graceful eviction task for an eviction of another kind.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`
	// +required
	Reason FailoverReason `json:"reason"`

	// FromCluster is the cluster the resource was moved away from.
	// +kubebuilder:validation:MaxLength=48
	// +required
	FromCluster string `json:"fromCluster"`

	// Producer is the controller that evicted the resource from FromCluster: the producer
	// of the graceful eviction task.
	// +kubebuilder:validation:MaxLength=128
	// +required
	Producer string `json:"producer"`

	// ClustersBeforeFailover records the clusters the resource was running on
	// when the failover started.
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MaxLength=48
	// +required
	ClustersBeforeFailover []string `json:"clustersBeforeFailover"`

	// ClustersAfterFailover records the clusters the resource was scheduled to
	// once the failover completed. Failovers the scheduler observed together share
	// the placement observed after them. It is empty while the new placement is not
	// known: until the scheduler has observed the failover, and for good when the
	// graceful eviction task of the failover was retired before that, or does not list
	// its clusters before failover.
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MaxLength=48
	// +optional
	ClustersAfterFailover []string `json:"clustersAfterFailover,omitempty"`

	// HealthyClusters lists the clusters the failover moved the resource to (those in
	// ClustersAfterFailover and not in ClustersBeforeFailover) on which the resource has
	// been observed healthy since. A later failover away from a cluster the resource was
	// never observed healthy on carries the state this failover carried, the state of the
	// last healthy run, rather than what the copy on that cluster reports.
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MaxLength=48
	// +optional
	HealthyClusters []string `json:"healthyClusters,omitempty"`

	// PreservedLabelState records the state the failover carries: the state its graceful
	// eviction task preserved from FromCluster, as extracted by the StatePreservation rules
	// of the failover behavior. When the task preserved none (for example, the application
	// never ran on FromCluster) and FromCluster is where the previous failover moved the
	// resource to, it is the state of that failover. Values longer than 1024 characters
	// are not recorded.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	PreservedLabelState map[string]string `json:"preservedLabelState,omitempty"`
}

// AggregatedStatusItem represents status of the resource running in a member cluster.
type AggregatedStatusItem struct {
	// ClusterName represents the member cluster name which the resource deployed on.
	// +required
	ClusterName string `json:"clusterName"`

	// Status reflects running status of current manifest.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Status *runtime.RawExtension `json:"status,omitempty"`

	// Applied represents if the resource referencing by ResourceBinding or ClusterResourceBinding
	// is successfully applied on the cluster.
	// +optional
	Applied bool `json:"applied,omitempty"`

	// Health represents the healthy state of the current resource.
	// There maybe different rules for different resources to achieve health status.
	// +kubebuilder:validation:Enum=Healthy;Unhealthy;Unknown
	// +optional
	Health ResourceHealth `json:"health,omitempty"`
}

// Conditions definition
const (
	// Scheduled represents the condition that the ResourceBinding or ClusterResourceBinding has been scheduled.
	Scheduled string = "Scheduled"

	// FullyApplied represents the condition that the resource referencing by ResourceBinding or ClusterResourceBinding
	// has been applied to all scheduled clusters.
	FullyApplied string = "FullyApplied"

	// EvictedWorkloadTerminating represents the condition that a workload evicted from a cluster with purge mode
	// Directly is still terminating there after a minute, so the failover waits for it. The message names the
	// cluster, the objects and their finalizers. The condition is removed once the workload is gone.
	EvictedWorkloadTerminating string = "EvictedWorkloadTerminating"
)

// ResourceHealth represents that the health status of the reference resource.
type ResourceHealth string

const (
	// ResourceHealthy represents that the health status of the current resource
	// that applied on the managed cluster is healthy.
	ResourceHealthy ResourceHealth = "Healthy"
	// ResourceUnhealthy represents that the health status of the current resource
	// that applied on the managed cluster is unhealthy.
	ResourceUnhealthy ResourceHealth = "Unhealthy"
	// ResourceUnknown represents that the health status of the current resource
	// that applied on the managed cluster is unknown.
	ResourceUnknown ResourceHealth = "Unknown"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ResourceBindingList contains a list of ResourceBinding.
type ResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items is the list of ResourceBinding.
	Items []ResourceBinding `json:"items"`
}

// +genclient
// +genclient:nonNamespaced
// +genclient:onlyVerbs=get,list,watch
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:resource:path=clusterresourcebindings,scope="Cluster",shortName=crb,categories={karmada-io}
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="Scheduled")].status`,name="SCHEDULED",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="FullyApplied")].status`,name="FULLYAPPLIED",type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="AGE",type=date

// ClusterResourceBinding represents a binding of a kubernetes resource with a ClusterPropagationPolicy.
//
// Like ResourceBinding, this is a read-only view that declares only some of
// upstream's fields: the generated client can get, list and watch it but never
// write it, since writing it back would drop the fields not declared here.
type ClusterResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec represents the desired behavior.
	Spec ResourceBindingSpec `json:"spec"`

	// Status represents the most recently observed status of the ResourceBinding.
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterResourceBindingList contains a list of ClusterResourceBinding.
type ClusterResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items is the list of ClusterResourceBinding.
	Items []ClusterResourceBinding `json:"items"`
}
