package flinkrunner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// JobManagerDeploymentStatus values (operator's JobManagerDeploymentStatus).
const (
	JMReady            = "READY"
	JMDeployedNotReady = "DEPLOYED_NOT_READY"
	JMDeploying        = "DEPLOYING"
	JMMissing          = "MISSING"
	JMError            = "ERROR"
)

// ResourceLifecycleState values used by the runner.
const (
	LifecycleDeployed  = "DEPLOYED"
	LifecycleStable    = "STABLE"
	LifecycleFailed    = "FAILED"
	LifecycleSuspended = "SUSPENDED"
)

// Flink job states used by the runner itself.
const (
	JobReconciling = "RECONCILING"
	JobRunning     = "RUNNING"
	JobFailed      = "FAILED"
	JobSuspended   = "SUSPENDED"
)

// ClusterInfo keys the runner adds (lab-specific, the operator puts flink-version etc. there).
const (
	ClusterInfoRestURL = "lab.flinkrunner/rest-url"
	ClusterInfoPID     = "lab.flinkrunner/pid"
	ClusterInfoLog     = "lab.flinkrunner/log"
)

// JobOverview is one entry of Flink's GET /jobs/overview.
type JobOverview struct {
	JID              string `json:"jid"`
	Name             string `json:"name"`
	State            string `json:"state"`
	StartTime        int64  `json:"start-time"`
	EndTime          int64  `json:"end-time"`
	LastModification int64  `json:"last-modification"`
}

// FetchOverview calls GET <baseURL>/jobs/overview.
func FetchOverview(ctx context.Context, c *http.Client, baseURL string) ([]JobOverview, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/jobs/overview", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /jobs/overview: %s: %.200s", resp.Status, body)
	}
	var out struct {
		Jobs []JobOverview `json:"jobs"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("GET /jobs/overview: %w", err)
	}
	return out.Jobs, nil
}

// pickJob returns the job with id jobID, else the most recently started one.
func pickJob(jobs []JobOverview, jobID string) (JobOverview, bool) {
	var best JobOverview
	found := false
	for _, j := range jobs {
		if jobID != "" && j.JID == jobID {
			return j, true
		}
		if !found || j.StartTime > best.StartTime {
			best, found = j, true
		}
	}
	return best, found
}

// Status is the FlinkDeployment status the runner writes (a subset of the
// operator's FlinkDeploymentStatus). Comparable, so "changed" is ==.
type Status struct {
	JobManagerDeploymentStatus string
	LifecycleState             string
	JobID, JobName, JobState   string
	StartTime, UpdateTime      string // epoch millis as strings, like the operator
	UpgradeSavepointPath       string
	Error                      string
	ObservedGeneration         int64
	ReconciliationState        string // DEPLOYED
	ReconciliationTimestamp    int64
	LastReconciledSpec         string
	LastStableSpec             string
	TaskManagerReplicas        int64 // -1: not reported
	RestURL, Log               string
	PID                        int
}

// ToMap renders the status as the object's .status.
func (s Status) ToMap() map[string]interface{} {
	m := map[string]interface{}{}
	put := func(mm map[string]interface{}, k, v string) {
		if v != "" {
			mm[k] = v
		}
	}
	put(m, "jobManagerDeploymentStatus", s.JobManagerDeploymentStatus)
	put(m, "lifecycleState", s.LifecycleState)
	put(m, "error", s.Error)
	if s.ObservedGeneration > 0 {
		m["observedGeneration"] = s.ObservedGeneration
	}
	js := map[string]interface{}{}
	put(js, "jobId", s.JobID)
	put(js, "jobName", s.JobName)
	put(js, "state", s.JobState)
	put(js, "startTime", s.StartTime)
	put(js, "updateTime", s.UpdateTime)
	put(js, "upgradeSavepointPath", s.UpgradeSavepointPath)
	if len(js) > 0 {
		m["jobStatus"] = js
	}
	if s.ReconciliationState != "" {
		rs := map[string]interface{}{"state": s.ReconciliationState}
		if s.ReconciliationTimestamp > 0 {
			rs["reconciliationTimestamp"] = s.ReconciliationTimestamp
		}
		put(rs, "lastReconciledSpec", s.LastReconciledSpec)
		put(rs, "lastStableSpec", s.LastStableSpec)
		m["reconciliationStatus"] = rs
	}
	if s.TaskManagerReplicas >= 0 {
		m["taskManager"] = map[string]interface{}{"replicas": s.TaskManagerReplicas}
	}
	ci := map[string]interface{}{}
	put(ci, ClusterInfoRestURL, s.RestURL)
	put(ci, ClusterInfoLog, s.Log)
	if s.PID > 0 {
		ci[ClusterInfoPID] = strconv.Itoa(s.PID)
	}
	if len(ci) > 0 {
		m["clusterInfo"] = ci
	}
	return m
}

// Observation is what one poll of a Flink process saw.
type Observation struct {
	Exited  bool   // the process has exited
	ExitMsg string // exit status plus the last log lines, when Exited
	RestErr error  // GET /jobs/overview failed (nil when Exited)
	Jobs    []JobOverview
}

// Tracker turns successive observations of one Flink process into statuses.
// It starts from the status written at launch (DEPLOYING / RECONCILING).
type Tracker struct {
	cur       Status
	restReady bool
	stable    bool
	// validation is the error of a refused spec change (SetValidationError);
	// errBefore the error it replaced.
	validation, errBefore string
}

// NewTracker starts tracking a freshly launched process.
func NewTracker(launched Status) *Tracker { return &Tracker{cur: launched} }

// Current is the last computed status.
func (t *Tracker) Current() Status { return t.cur }

// SetValidationError reports msg in the status of a running job whose new
// spec is refused (the job keeps running the last valid spec).
func (t *Tracker) SetValidationError(msg string) Status {
	if t.validation == "" {
		t.errBefore = t.cur.Error
	}
	t.validation = msg
	t.cur.Error = msg
	return t.cur
}

// ClearValidationError drops the error SetValidationError reported, once the
// spec is valid again; it reports whether there was one.
func (t *Tracker) ClearValidationError() bool {
	if t.validation == "" {
		return false
	}
	if t.cur.Error == t.validation {
		t.cur.Error = t.errBefore
	}
	t.validation, t.errBefore = "", ""
	return true
}

// SetGeneration records a new observedGeneration for a spec change that did
// not restart the process.
func (t *Tracker) SetGeneration(gen int64, specJSON string) Status {
	t.cur.ObservedGeneration = gen
	t.cur.LastReconciledSpec = specJSON
	if t.stable {
		t.cur.LastStableSpec = specJSON
	}
	return t.cur
}

// Observe maps one observation to the next status:
//   - process exited: JM ERROR, lifecycle FAILED, error = exit + last log lines,
//     a non-terminal job state becomes RECONCILING (the operator's
//     "ifRunningMoveToReconciling" when the cluster cannot be reached);
//   - REST not answering yet: JM DEPLOYING, job RECONCILING;
//   - REST stopped answering after it did: JM DEPLOYED_NOT_READY, RUNNING -> RECONCILING;
//   - REST answers: JM READY, job fields from /jobs/overview; lifecycle STABLE
//     once the job was RUNNING, FAILED when the job is FAILED, else DEPLOYED.
func (t *Tracker) Observe(o Observation) Status {
	s := t.cur
	switch {
	case o.Exited:
		s.JobManagerDeploymentStatus = JMError
		s.LifecycleState = LifecycleFailed
		s.Error = o.ExitMsg
		if !terminal(s.JobState) {
			s.JobState = JobReconciling
		}
		s.PID = 0
	case o.RestErr != nil && !t.restReady:
		s.JobManagerDeploymentStatus = JMDeploying
	case o.RestErr != nil:
		s.JobManagerDeploymentStatus = JMDeployedNotReady
		if s.JobState == JobRunning {
			s.JobState = JobReconciling
		}
	default:
		t.restReady = true
		s.JobManagerDeploymentStatus = JMReady
		if j, ok := pickJob(o.Jobs, s.JobID); ok {
			s.JobID, s.JobName, s.JobState = j.JID, j.Name, j.State
			if j.StartTime > 0 {
				s.StartTime = strconv.FormatInt(j.StartTime, 10)
			}
			if j.LastModification > 0 {
				s.UpdateTime = strconv.FormatInt(j.LastModification, 10)
			} else if j.StartTime > 0 { // CREATED jobs report last-modification 0
				s.UpdateTime = s.StartTime
			}
		}
		if s.JobState == JobRunning {
			t.stable = true
		}
		switch {
		case s.JobState == JobFailed:
			s.LifecycleState = LifecycleFailed
		case t.stable:
			s.LifecycleState = LifecycleStable
			s.LastStableSpec = s.LastReconciledSpec
		default:
			s.LifecycleState = LifecycleDeployed
		}
	}
	t.cur = s
	return s
}

func terminal(state string) bool {
	switch state {
	case "FINISHED", "FAILED", "CANCELED", "SUSPENDED":
		return true
	}
	return false
}
