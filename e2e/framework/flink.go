package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karmada-failover/lab/lab/flinkrunner"
)

// FlinkDeploymentGVR is flink.apache.org/v1beta1 flinkdeployments.
var FlinkDeploymentGVR = flinkrunner.GVR

// FlinkRESTURLKey is where the lab's FlinkDeployment runner reports the Flink
// REST address of a job in status.clusterInfo.
const FlinkRESTURLKey = flinkrunner.ClusterInfoRestURL

// NewFlinkDeployment is the lab's checkpointed sequence job as a
// FlinkDeployment: checkpoints every 2 s to checkpointDir, last-state upgrades.
func NewFlinkDeployment(namespace, name, checkpointDir string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "flink.apache.org/v1beta1",
		"kind":       "FlinkDeployment",
		"metadata":   map[string]interface{}{"namespace": namespace, "name": name},
		"spec": map[string]interface{}{
			"flinkVersion": "v1_20",
			"flinkConfiguration": map[string]interface{}{
				"state.checkpoints.dir": checkpointDir,
				"execution.checkpointing.externalized-checkpoint-retention": "RETAIN_ON_CANCELLATION",
				"state.checkpoints.num-retained":                            "3",
			},
			"job": map[string]interface{}{
				"jarURI":      "local:///opt/flink/usrlib/failover-lab-flink-job.jar",
				"entryClass":  "io.karmadafailover.lab.flink.FailoverLabJob",
				"args":        []interface{}{"--rate", "50", "--checkpoint-interval-ms", "2000"},
				"parallelism": int64(1),
				"upgradeMode": "last-state",
				"state":       "running",
			},
		},
	}}
}

// FlinkJobStatus is what a scenario reads from a FlinkDeployment's status.
type FlinkJobStatus struct {
	JobID, State, RESTURL, Lifecycle string
}

// ReadFlinkStatus extracts the job fields from a FlinkDeployment.
func ReadFlinkStatus(u *unstructured.Unstructured) FlinkJobStatus {
	var s FlinkJobStatus
	s.JobID, _, _ = unstructured.NestedString(u.Object, "status", "jobStatus", "jobId")
	s.State, _, _ = unstructured.NestedString(u.Object, "status", "jobStatus", "state")
	s.Lifecycle, _, _ = unstructured.NestedString(u.Object, "status", "lifecycleState")
	s.RESTURL, _, _ = unstructured.NestedString(u.Object, "status", "clusterInfo", FlinkRESTURLKey)
	return s
}

// FlinkREST reads Flink's REST API of one job.
type FlinkREST struct {
	URL   string
	JobID string
}

func (f FlinkREST) get(ctx context.Context, path string, out interface{}) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(f.URL, "/")+path, nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// Checkpoints are the fields of /jobs/<id>/checkpoints a scenario needs.
type Checkpoints struct {
	Completed        int
	LatestCompleted  string // external path of the latest completed checkpoint
	RestoredFrom     string // external path the job restored from, "" if it did not
	RestoredID       int64
	LatestCompletedN int64
}

// Checkpoints reads the job's checkpoint statistics.
func (f FlinkREST) Checkpoints(ctx context.Context) (Checkpoints, error) {
	var raw struct {
		Counts struct {
			Completed int `json:"completed"`
		} `json:"counts"`
		Latest struct {
			Completed *struct {
				ID           int64  `json:"id"`
				ExternalPath string `json:"external_path"`
			} `json:"completed"`
			Restored *struct {
				ID           int64  `json:"id"`
				ExternalPath string `json:"external_path"`
			} `json:"restored"`
		} `json:"latest"`
	}
	if err := f.get(ctx, "/jobs/"+f.JobID+"/checkpoints", &raw); err != nil {
		return Checkpoints{}, err
	}
	c := Checkpoints{Completed: raw.Counts.Completed}
	if raw.Latest.Completed != nil {
		c.LatestCompleted, c.LatestCompletedN = raw.Latest.Completed.ExternalPath, raw.Latest.Completed.ID
	}
	if raw.Latest.Restored != nil {
		c.RestoredFrom, c.RestoredID = raw.Latest.Restored.ExternalPath, raw.Latest.Restored.ID
	}
	return c, nil
}

// SequenceMetrics are the job's loss-measurement gauges (lab/flink README).
type SequenceMetrics struct {
	MaxSequence, FirstSequenceAfterRestore, RestoredMaxSequence int64
}

// SequenceMetrics reads the gauges of the stateful operator (subtask 0).
func (f FlinkREST) SequenceMetrics(ctx context.Context) (SequenceMetrics, error) {
	var job struct {
		Vertices []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"vertices"`
	}
	if err := f.get(ctx, "/jobs/"+f.JobID, &job); err != nil {
		return SequenceMetrics{}, err
	}
	names := []string{"maxSequence", "firstSequenceAfterRestore", "restoredMaxSequence"}
	for _, v := range job.Vertices {
		var got []struct {
			ID    string `json:"id"`
			Value string `json:"value"`
		}
		q := "0.sequence-state." + strings.Join(names, ",0.sequence-state.")
		if err := f.get(ctx, "/jobs/"+f.JobID+"/vertices/"+v.ID+"/metrics?get="+q, &got); err != nil {
			continue
		}
		if len(got) == 0 {
			continue
		}
		vals := map[string]int64{}
		for _, g := range got {
			n, err := strconv.ParseInt(g.Value, 10, 64)
			if err != nil {
				return SequenceMetrics{}, fmt.Errorf("metric %s=%q: %w", g.ID, g.Value, err)
			}
			vals[strings.TrimPrefix(g.ID, "0.sequence-state.")] = n
		}
		if len(vals) != len(names) {
			return SequenceMetrics{}, fmt.Errorf("vertex %s reports %d of %d sequence metrics", v.Name, len(vals), len(names))
		}
		return SequenceMetrics{MaxSequence: vals["maxSequence"], FirstSequenceAfterRestore: vals["firstSequenceAfterRestore"],
			RestoredMaxSequence: vals["restoredMaxSequence"]}, nil
	}
	return SequenceMetrics{}, fmt.Errorf("no vertex of job %s reports the sequence metrics yet", f.JobID)
}
