// Package flink is what this project reads of flink-kubernetes-operator's FlinkDeployment
// (flink.apache.org/v1beta1): its resource, the paths of the status fields, and the Flink
// configuration as Flink reads it. The restore webhook (restore/webhook), the lab's
// FlinkDeployment runner (lab/flinkrunner) and the e2e suite share it, so the three read
// the same object the same way.
package flink

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	Group    = "flink.apache.org"
	Version  = "v1beta1"
	Kind     = "FlinkDeployment"
	Resource = "flinkdeployments"
	// CRDName is the name of the operator's FlinkDeployment CRD.
	CRDName = Resource + "." + Group
)

var (
	// GroupVersion is flink.apache.org/v1beta1.
	GroupVersion = schema.GroupVersion{Group: Group, Version: Version}
	// GVR is the FlinkDeployment resource the operator's CRD serves.
	GVR = GroupVersion.WithResource(Resource)
	// GVK is the FlinkDeployment kind.
	GVK = GroupVersion.WithKind(Kind)
)

// Paths of the status fields the operator writes.
var (
	JobIDPath                = []string{"status", "jobStatus", "jobId"}
	JobNamePath              = []string{"status", "jobStatus", "jobName"}
	JobStatePath             = []string{"status", "jobStatus", "state"}
	UpgradeSavepointPathPath = []string{"status", "jobStatus", "upgradeSavepointPath"}
	LifecycleStatePath       = []string{"status", "lifecycleState"}
	JobManagerStatusPath     = []string{"status", "jobManagerDeploymentStatus"}
	LastReconciledSpecPath   = []string{"status", "reconciliationStatus", "lastReconciledSpec"}
	ClusterInfoPath          = []string{"status", "clusterInfo"}
)

// Flink configuration keys, newest first (Flink 1.20 reads the current key before its
// deprecated aliases; see its CheckpointingOptions).
var (
	// CheckpointDirKeys: the checkpoint directory.
	CheckpointDirKeys = []string{"execution.checkpointing.dir", "state.checkpoints.dir", "state.backend.fs.checkpointdir"}
	// SavepointDirKeys: the default savepoint directory.
	SavepointDirKeys = []string{"execution.checkpointing.savepoint-dir", "state.savepoints.dir", "savepoints.state.backend.fs.dir"}
	// CreateSubdirKeys: whether checkpoints go to a <jobId>/ subdirectory.
	CreateSubdirKeys = []string{"execution.checkpointing.create-subdir", "state.checkpoints.create-subdir"}
)

// Configuration is spec.flinkConfiguration as Flink keys and values. The CRD keeps the field
// open (x-kubernetes-preserve-unknown-fields), so users write it flat ("a.b": "v") or as
// nested YAML ({a: {b: v}}); both give "a.b" here. Values are rendered as Flink reads them
// (Value).
func Configuration(m map[string]any) map[string]string {
	out := map[string]string{}
	flatten("", m, out)
	return out
}

func flatten(prefix string, m map[string]any, out map[string]string) {
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok {
			flatten(key, sub, out)
			continue
		}
		out[key] = Value(v)
	}
}

// Value renders a JSON value the way Flink expects it in a configuration (lists are
// ';'-separated, like Flink's list options).
func Value(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case bool:
		return strconv.FormatBool(t)
	case int64:
		return strconv.FormatInt(t, 10)
	case int:
		return strconv.Itoa(t)
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case json.Number:
		return t.String()
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = Value(e)
		}
		return strings.Join(parts, ";")
	default:
		return fmt.Sprint(t)
	}
}

// First is the value of the first of keys set (non-empty) in the first of confs that sets
// one ("" when none does): spec.flinkConfiguration before defaults, say.
func First(keys []string, confs ...map[string]string) string {
	for _, conf := range confs {
		for _, k := range keys {
			if v := conf[k]; v != "" {
				return v
			}
		}
	}
	return ""
}
