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
	"k8s.io/client-go/rest"

	"github.com/karmada-failover/lab/apis/flink"
	"github.com/karmada-failover/lab/lab/flinkrunner"
)

// NewFlinkDeployment is the lab's checkpointed sequence job as a
// FlinkDeployment: checkpoints every 2 s to checkpointDir, last-state upgrades.
func NewFlinkDeployment(namespace, name, checkpointDir string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": flink.GroupVersion.String(),
		"kind":       flink.Kind,
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

// FlinkJobStatus is what a scenario reads from a FlinkDeployment's status,
// with REST, the job's Flink REST API (Lab.ReadFlinkStatus).
type FlinkJobStatus struct {
	JobID, State, RESTURL, Lifecycle string
	REST                             FlinkREST
}

// ReadFlinkStatus extracts the job fields from a FlinkDeployment, without the
// way to its REST API (Lab.ReadFlinkStatus adds it).
func ReadFlinkStatus(u *unstructured.Unstructured) FlinkJobStatus {
	var s FlinkJobStatus
	s.JobID, _, _ = unstructured.NestedString(u.Object, flink.JobIDPath...)
	s.State, _, _ = unstructured.NestedString(u.Object, flink.JobStatePath...)
	s.Lifecycle, _, _ = unstructured.NestedString(u.Object, flink.LifecycleStatePath...)
	s.RESTURL, _, _ = unstructured.NestedString(u.Object, append(flink.ClusterInfoPath, flinkrunner.ClusterInfoRestURL)...)
	return s
}

// ReadFlinkStatus extracts the job fields from FlinkDeployment u of member, and
// the way a scenario reads the job's Flink REST API there, whatever the lab's
// provider: where the lab's runner reports the address of a local Flink process
// (status.clusterInfo, a detail of the hermetic lab), that address; otherwise
// the JobManager's REST Service the operator creates, <name>-rest, port rest,
// through the member's API server proxy (kind).
func (l *Lab) ReadFlinkStatus(member string, u *unstructured.Unstructured) FlinkJobStatus {
	s := ReadFlinkStatus(u)
	s.REST = FlinkREST{URL: s.RESTURL, JobID: s.JobID}
	if s.RESTURL == "" {
		if p := l.Member(member); p != nil {
			s.REST = ServiceFlinkREST(p.RESTConfig(), u.GetNamespace(), u.GetName(), s.JobID)
		}
	}
	return s
}

// ServiceFlinkREST reaches the REST API of FlinkDeployment name's JobManager
// through the API server's service proxy of cfg's cluster.
func ServiceFlinkREST(cfg *rest.Config, namespace, name, jobID string) FlinkREST {
	f := FlinkREST{JobID: jobID,
		URL: strings.TrimSuffix(cfg.Host, "/") + "/api/v1/namespaces/" + namespace + "/services/" + name + "-rest:rest/proxy"}
	if rt, err := rest.TransportFor(cfg); err == nil {
		f.Client = &http.Client{Transport: rt}
	} else {
		f.err = fmt.Errorf("the API server transport of %s: %w", cfg.Host, err)
	}
	return f
}

// FlinkREST reads Flink's REST API of one job.
type FlinkREST struct {
	URL   string
	JobID string
	// Client is the HTTP client of the requests (nil: a direct connection).
	Client *http.Client
	err    error
}

func (f FlinkREST) get(ctx context.Context, path string, out interface{}) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if f.err != nil {
		return f.err
	}
	if f.URL == "" {
		return fmt.Errorf("no Flink REST address for job %s", f.JobID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(f.URL, "/")+path, nil)
	if err != nil {
		return err
	}
	client := f.Client
	if client == nil {
		client = &http.Client{Transport: &http.Transport{Proxy: nil}}
	}
	resp, err := client.Do(req)
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

// State reads the job's state from /jobs/<id> (RUNNING, CREATED, …).
func (f FlinkREST) State(ctx context.Context) (string, error) {
	var raw struct {
		State string `json:"state"`
	}
	if err := f.get(ctx, "/jobs/"+f.JobID, &raw); err != nil {
		return "", err
	}
	return raw.State, nil
}
