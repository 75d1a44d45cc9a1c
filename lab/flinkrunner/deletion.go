package flinkrunner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"

	"github.com/karmada-failover/lab/apis/flink"
)

// The operator's deletion contract, kept by the runner.
//
// flink-kubernetes-operator puts a finalizer on every FlinkDeployment
// (JOSDK's <plural>.<group>/finalizer). A delete of the object only sets its
// deletionTimestamp: the operator then cancels the job, or with
// kubernetes.operator.job.savepoint-on-deletion stops it with a savepoint
// (drained with kubernetes.operator.job.drain-on-savepoint-deletion), the
// JobManager's and TaskManagers' pods terminate, and only then does the
// operator remove its finalizer and the object go. Until then the job runs and
// commits. With savepoint-on-deletion and a job that is not running, the
// deletion never completes (FLINK-40388): the object stays Terminating until
// someone removes the finalizer.
const (
	// Finalizer is the operator's finalizer on FlinkDeployments.
	Finalizer = "flinkdeployments.flink.apache.org/finalizer"
	// SavepointOnDeletionKey and DrainOnSavepointDeletionKey are the operator's
	// options (spec.flinkConfiguration or the runner's --flink-conf).
	SavepointOnDeletionKey      = "kubernetes.operator.job.savepoint-on-deletion"
	DrainOnSavepointDeletionKey = "kubernetes.operator.job.drain-on-savepoint-deletion"
	// DeletionTimeAnnotation overrides --deletion-time for one FlinkDeployment
	// (a Go duration): how long its job runs on after the delete before it is
	// cancelled or stopped. A setting of the lab, not of the operator.
	DeletionTimeAnnotation = "lab.flinkrunner/deletion-time"

	ReasonCleanup       = "Cleanup"
	ReasonCleanupFailed = "CleanupFailed"
)

// DeletionMode is how a deleted FlinkDeployment's job is stopped.
type DeletionMode string

const (
	DeletionCancel    DeletionMode = "cancel"
	DeletionSavepoint DeletionMode = "savepoint"
)

// DeletionSpec is what the runner does when a FlinkDeployment is deleted.
type DeletionSpec struct {
	Mode  DeletionMode
	Drain bool
	// After is how long the job runs on after the delete is observed: the
	// operator noticing it and the JobManager's shutdown.
	After time.Duration
	// SavepointDir is the deployment's savepoint directory (flink.SavepointDirKeys; savepoint mode).
	SavepointDir string
}

// PlanDeletion reads the deletion options of a FlinkDeployment: its
// flinkConfiguration over the runner's defaults, its deletion-time annotation
// over def. A bad annotation is an error (the default is used, and said).
func PlanDeletion(annotations, conf, defaults map[string]string, def time.Duration) (DeletionSpec, error) {
	get := func(k string) string {
		if v, ok := conf[k]; ok {
			return v
		}
		return defaults[k]
	}
	s := DeletionSpec{Mode: DeletionCancel, After: def}
	if strings.EqualFold(strings.TrimSpace(get(SavepointOnDeletionKey)), "true") {
		s.Mode = DeletionSavepoint
		s.Drain = strings.EqualFold(strings.TrimSpace(get(DrainOnSavepointDeletionKey)), "true")
		s.SavepointDir = flink.First(flink.SavepointDirKeys, conf, defaults)
	}
	if v, ok := annotations[DeletionTimeAnnotation]; ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return s, fmt.Errorf("annotation %s=%q: want a non-negative Go duration (e.g. 20s)", DeletionTimeAnnotation, v)
		}
		s.After = d
	}
	return s, nil
}

func hasFinalizer(u *unstructured.Unstructured) bool {
	for _, f := range u.GetFinalizers() {
		if f == Finalizer {
			return true
		}
	}
	return false
}

// setFinalizer adds (add=true) or removes the operator's finalizer, retrying
// on conflicts. An object already gone is not an error.
func (r *Runner) setFinalizer(ctx context.Context, ns, name string, add bool) error {
	res := r.client.Resource(flink.GVR).Namespace(ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := res.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		has := hasFinalizer(obj)
		if has == add {
			return nil
		}
		if add {
			if obj.GetDeletionTimestamp() != nil {
				return nil // a finalizer cannot be added to an object being deleted
			}
			obj.SetFinalizers(append(obj.GetFinalizers(), Finalizer))
		} else {
			var keep []string
			for _, f := range obj.GetFinalizers() {
				if f != Finalizer {
					keep = append(keep, f)
				}
			}
			obj.SetFinalizers(keep)
		}
		_, err = res.Update(ctx, obj, metav1.UpdateOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// reconcileDeletion handles a FlinkDeployment with a deletionTimestamp: with
// the finalizer, one cleanup per object (cleanup); without it, the process
// is stopped at once (the object goes anyway).
func (r *Runner) reconcileDeletion(ctx context.Context, key string, u *unstructured.Unstructured) error {
	if !hasFinalizer(u) {
		r.stopRun(key, "deleted")
		return nil
	}
	r.mu.Lock()
	if r.deleting[key] == string(u.GetUID()) {
		r.mu.Unlock()
		return nil
	}
	r.deleting[key] = string(u.GetUID())
	r.mu.Unlock()
	conf := map[string]string{}
	if m, ok, _ := unstructured.NestedMap(u.Object, "spec", "flinkConfiguration"); ok {
		conf = flink.Configuration(m)
	}
	spec, err := PlanDeletion(u.GetAnnotations(), conf, r.opts.Launch.FlinkConf, r.opts.DeletionTime)
	if err != nil {
		r.event(u, corev1.EventTypeWarning, ReasonCleanupFailed, err.Error())
	}
	go r.cleanup(ctx, key, u.DeepCopy(), spec)
	return nil
}

// cleanup is the operator's deletion of one FlinkDeployment: the job runs on
// for spec.After, is cancelled or stopped with a savepoint, its process stops,
// and the finalizer goes. With savepoint mode and no running job it never
// completes (FLINK-40388); a failed savepoint is retried.
func (r *Runner) cleanup(ctx context.Context, key string, u *unstructured.Unstructured, spec DeletionSpec) {
	ns, name := u.GetNamespace(), u.GetName()
	r.event(u, corev1.EventTypeNormal, ReasonCleanup, fmt.Sprintf(
		"Cleaning up FlinkDeployment: the job is stopped (%s) in %s", spec.Mode, spec.After))
	klog.InfoS("FlinkDeployment deleted: cleaning up", "key", key, "mode", spec.Mode, "drain", spec.Drain, "after", spec.After)
	select {
	case <-ctx.Done():
		return
	case <-time.After(spec.After):
	}
	for {
		r.mu.Lock()
		rn := r.runs[key]
		r.mu.Unlock()
		if rn != nil && rn.uid != string(u.GetUID()) {
			rn = nil
		}
		done, err := r.stopForDeletion(ctx, key, rn, spec)
		if err == nil && done {
			break
		}
		if err != nil {
			msg := fmt.Sprintf("Cannot stop the job of the deleted FlinkDeployment: %v; the object stays Terminating "+
				"until the job stops, or until its finalizer %s is removed (kubectl patch flinkdeployment %s -n %s --type=json "+
				"-p '[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}]')", err, Finalizer, name, ns)
			klog.InfoS("Cleanup blocked", "key", key, "err", err)
			r.event(u, corev1.EventTypeWarning, ReasonCleanupFailed, msg)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Second):
		}
		cur, getErr := r.client.Resource(flink.GVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(getErr) || (getErr == nil && (cur.GetUID() != u.GetUID() || !hasFinalizer(cur))) {
			// Someone removed the finalizer: the object is gone (or going), and
			// with it its job; a new object of the same name keeps its own.
			r.stopRunOf(key, string(u.GetUID()), "deleted")
			return
		}
	}
	if err := r.setFinalizer(ctx, ns, name, false); err != nil {
		klog.ErrorS(err, "Removing the finalizer", "key", key)
		r.mu.Lock()
		delete(r.deleting, key) // the next event retries
		r.mu.Unlock()
		r.enqueue(ctx, key)
		return
	}
	klog.InfoS("FlinkDeployment cleaned up, finalizer removed", "key", key)
}

// stopForDeletion stops rn's job the way spec says. done is false with a nil
// error when there is nothing to do yet.
func (r *Runner) stopForDeletion(ctx context.Context, key string, rn *run, spec DeletionSpec) (bool, error) {
	running := false
	jobID := ""
	if rn != nil && !rn.proc.Exited() {
		rn.mu.Lock()
		st := rn.tracker.Current()
		rn.mu.Unlock()
		running = st.JobState == JobRunning
		jobID = st.JobID
	}
	base := ""
	if rn != nil {
		base = rn.proc.RESTBase()
	}
	switch spec.Mode {
	case DeletionSavepoint:
		if !running {
			return false, fmt.Errorf("savepoint on deletion: the job is not running (FLINK-40388)")
		}
		if spec.SavepointDir == "" {
			return false, fmt.Errorf("savepoint on deletion: no savepoint directory (%s)", strings.Join(flink.SavepointDirKeys, ", "))
		}
		loc, err := StopWithSavepoint(ctx, &http.Client{Timeout: 10 * time.Second}, base, jobID, spec.SavepointDir, spec.Drain, 5*time.Minute)
		if err != nil {
			return false, fmt.Errorf("savepoint on deletion: %w", err)
		}
		r.eventf(&Deployment{Namespace: rn.ns, Name: rn.name, UID: rn.uid}, corev1.EventTypeNormal, ReasonCleanup,
			"Job %s stopped with savepoint %s", jobID, loc)
		klog.InfoS("Job stopped with a savepoint", "key", key, "jobId", jobID, "savepoint", loc, "drain", spec.Drain)
	default:
		if running {
			if err := CancelJob(ctx, &http.Client{Timeout: 10 * time.Second}, base, jobID); err != nil {
				klog.InfoS("Cancel through REST failed, stopping the process", "key", key, "err", err)
			}
		}
	}
	if rn != nil {
		r.stopRunOf(key, rn.uid, "deleted")
	}
	return true, nil
}

// stopRunOf stops the process of key if it runs the object with uid.
func (r *Runner) stopRunOf(key, uid, why string) {
	r.mu.Lock()
	rn := r.runs[key]
	if rn == nil || rn.uid != uid {
		r.mu.Unlock()
		return
	}
	delete(r.runs, key)
	r.mu.Unlock()
	r.stop(rn, why)
}

// CancelJob cancels jobID through Flink's REST API (PATCH /jobs/:id?mode=cancel).
func CancelJob(ctx context.Context, c *http.Client, baseURL, jobID string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, baseURL+"/jobs/"+jobID+"?mode=cancel", nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("PATCH /jobs/%s?mode=cancel: %s", jobID, resp.Status)
	}
	return nil
}

// StopWithSavepoint stops jobID with a savepoint into dir (POST
// /jobs/:id/stop, then polls the operation) and returns the savepoint's path.
func StopWithSavepoint(ctx context.Context, c *http.Client, baseURL, jobID, dir string, drain bool, timeout time.Duration) (string, error) {
	body, _ := json.Marshal(map[string]interface{}{"targetDirectory": dir, "drain": drain})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/jobs/"+jobID+"/stop", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	var trig struct {
		RequestID string `json:"request-id"`
	}
	err = json.NewDecoder(resp.Body).Decode(&trig)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 || err != nil || trig.RequestID == "" {
		return "", fmt.Errorf("POST /jobs/%s/stop: %s %v", jobID, resp.Status, err)
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/jobs/"+jobID+"/savepoints/"+trig.RequestID, nil)
		if err != nil {
			return "", err
		}
		resp, err := c.Do(req)
		if err == nil {
			var st struct {
				Status struct {
					ID string `json:"id"`
				} `json:"status"`
				Operation struct {
					Location     string          `json:"location"`
					FailureCause json.RawMessage `json:"failure-cause"`
				} `json:"operation"`
			}
			derr := json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if derr == nil && st.Status.ID == "COMPLETED" {
				if st.Operation.Location == "" {
					return "", fmt.Errorf("savepoint failed: %s", st.Operation.FailureCause)
				}
				return st.Operation.Location, nil
			}
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return "", fmt.Errorf("stop with savepoint of job %s: no result in %s", jobID, timeout)
}
