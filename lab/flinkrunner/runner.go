package flinkrunner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/karmada-failover/lab/apis/flink"
	"github.com/karmada-failover/lab/restore/checkpoint"
)

// Options configure a Runner.
type Options struct {
	Launch       LaunchConfig
	PortLo       int           // REST port range, inclusive
	PortHi       int           //
	LogDir       string        // <LogDir>/<namespace>_<name>.log per Flink process
	HealthAddr   string        // "" disables /healthz, /readyz, /debug/jobs
	PollInterval time.Duration // REST poll period (2s)
	StopGrace    time.Duration // SIGTERM -> SIGKILL (20s)
	Env          []string      // extra environment of the Flink processes
	Resync       time.Duration // the cache's resync period (0 = none)
	// DeletionTime is how long a deleted FlinkDeployment's job runs on before
	// it is cancelled or stopped with a savepoint (the operator noticing the
	// delete, the JobManager's shutdown); DeletionTimeAnnotation overrides it.
	DeletionTime time.Duration
	// LastState returns the path of the latest completed checkpoint of jobID
	// under checkpointDir ("" when it has none). A job deployed before (by this
	// process or an earlier one) resumes from it; nil: jobs never resume.
	LastState func(ctx context.Context, checkpointDir, jobID string) (string, error)
	// Executor runs the jobs; nil: a LocalExecutor (PortLo..PortHi, LogDir, Env).
	Executor Executor
}

// LastStateFrom is Options.LastState over a checkpoint locator (the restore
// webhook's, restore/checkpoint): the latest completed checkpoint of the job, ""
// when the job completed none.
func LastStateFrom(loc checkpoint.Locator) func(ctx context.Context, checkpointDir, jobID string) (string, error) {
	return func(ctx context.Context, checkpointDir, jobID string) (string, error) {
		c, err := loc.LatestCompleted(ctx, checkpointDir, jobID)
		if errors.Is(err, checkpoint.ErrNotFound) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		return c.SavepointPath, nil
	}
}

// Runner watches FlinkDeployments in one cluster and runs their Flink processes:
// a controller-runtime Manager with one Reconciler (one worker, as the
// operator's), its cache of FlinkDeployments, events and health.
type Runner struct {
	opts   Options
	client dynamic.Interface
	exec   Executor
	mgr    manager.Manager
	reader ctrlclient.Reader // the manager's cache of FlinkDeployments
	// requeue brings a key back to the Reconciler from outside it (a deletion's
	// cleanup that failed).
	requeue chan event.GenericEvent
	synced  atomic.Bool

	mu      sync.Mutex
	runs    map[string]*run
	written map[string]Status // last status written per key
	// deleting: UID of the object whose cleanup runs, per key.
	deleting map[string]string

	recorder record.EventRecorder // events on FlinkDeployments, as the operator's
}

// run is one Flink process of one FlinkDeployment.
type run struct {
	key, ns, name string
	uid           string // a recreated object (same name) gets a new process
	fingerprint   string
	// firstDeployment: this process is the object's first deployment
	// (lastReconciledSpec's resource_metadata.firstDeployment).
	firstDeployment bool
	launch          *Launch
	port            int
	proc            Process
	cancel          context.CancelFunc
	monitorDone     chan struct{}

	mu      sync.Mutex // guards tracker and orders this run's status writes
	tracker *Tracker
}

// ProcessInfo describes a running Flink process (for /debug/jobs and tests).
type ProcessInfo struct {
	Key      string `json:"key"`
	PID      int    `json:"pid,omitempty"`
	RestPort int    `json:"restPort"`
	JobID    string `json:"jobId"`
	JobState string `json:"jobState"`
	JM       string `json:"jobManagerDeploymentStatus"`
	Log      string `json:"log"`
	Exited   bool   `json:"exited"`
}

// RESTConfig loads a kubeconfig context ("" = current context).
func RESTConfig(kubeconfig, context string) (*rest.Config, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}
	if kubeconfig == "" {
		rules = clientcmd.NewDefaultClientConfigLoadingRules()
	}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
}

// New creates a Runner for the cluster behind cfg.
func New(cfg *rest.Config, opts Options) (*Runner, error) {
	if opts.PollInterval <= 0 {
		opts.PollInterval = 2 * time.Second
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = 20 * time.Second
	}
	if opts.Executor == nil {
		local, err := NewLocalExecutor(opts.PortLo, opts.PortHi, opts.LogDir, opts.Env)
		if err != nil {
			return nil, err
		}
		opts.Executor = local
	}
	if opts.Launch.RESTAddress == nil {
		opts.Launch.RESTAddress = opts.Executor.Bind
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "flink-runner"
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	r := &Runner{
		opts:     opts,
		client:   client,
		exec:     opts.Executor,
		requeue:  make(chan event.GenericEvent, 64),
		runs:     map[string]*run{},
		written:  map[string]Status{},
		deleting: map[string]string{},
	}
	metricsAddr := "0" // off
	if opts.HealthAddr != "" {
		metricsAddr = opts.HealthAddr
	}
	var resync *time.Duration
	if opts.Resync > 0 {
		resync = &opts.Resync
	}
	mgr, err := manager.New(cfg, manager.Options{
		// One address for /metrics (controller-runtime's: reconciles, work queue),
		// /healthz, /readyz and /debug/jobs.
		Metrics:                metricsserver.Options{BindAddress: metricsAddr, ExtraHandlers: r.handlers()},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{SyncPeriod: resync},
		// The Flink processes stop after the manager (Run), not within its grace period.
		GracefulShutdownTimeout: ptr.To(30 * time.Second),
	})
	if err != nil {
		return nil, err
	}
	r.mgr, r.reader = mgr, mgr.GetCache()
	r.recorder = mgr.GetEventRecorderFor("flink-runner") //nolint:staticcheck // core/v1 Events, as the operator records them
	err = builder.ControllerManagedBy(mgr).
		Named("flinkdeployment").
		For(newFlinkDeployment()).
		WatchesRawSource(source.Channel(r.requeue, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			return reconcile.Result{}, r.reconcile(ctx, req.String())
		}))
	if err != nil {
		return nil, err
	}
	// Ready once the cache of FlinkDeployments has synced (/readyz).
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		if mgr.GetCache().WaitForCacheSync(ctx) {
			r.synced.Store(true)
			klog.InfoS("FlinkDeployment cache synced")
		}
		return nil
	})); err != nil {
		return nil, err
	}
	return r, nil
}

// newFlinkDeployment is an empty FlinkDeployment for the manager's cache and client.
func newFlinkDeployment() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(flink.GVR.GroupVersion().WithKind(flink.Kind))
	return u
}

// Run runs the manager until ctx ends, then stops every Flink process it
// started and returns. At start each existing FlinkDeployment gets a new
// process; one that was deployed before resumes from its job's latest
// completed checkpoint (Options.LastState), as the operator's JobManager does
// after a failover.
func (r *Runner) Run(ctx context.Context) error {
	err := r.mgr.Start(ctx)
	klog.InfoS("Shutting down: stopping all Flink processes")
	r.stopAll()
	return err
}

// enqueue brings key back to the Reconciler, unless the runner is stopping.
func (r *Runner) enqueue(ctx context.Context, key string) {
	ns, name, _ := strings.Cut(key, "/")
	u := newFlinkDeployment()
	u.SetNamespace(ns)
	u.SetName(name)
	select {
	case r.requeue <- event.GenericEvent{Object: u}:
	case <-ctx.Done():
	}
}

// handlers serve /healthz (process up), /readyz (cache synced) and
// /debug/jobs (JSON list of processes), next to the manager's /metrics.
func (r *Runner) handlers() map[string]http.Handler {
	live := &healthz.Handler{Checks: map[string]healthz.Checker{"ping": healthz.Ping}}
	ready := &healthz.Handler{Checks: map[string]healthz.Checker{"cache-synced": func(*http.Request) error {
		if !r.synced.Load() {
			return errors.New("FlinkDeployment cache not synced")
		}
		return nil
	}}}
	return map[string]http.Handler{
		"/healthz":  http.StripPrefix("/healthz", live),
		"/healthz/": http.StripPrefix("/healthz", live),
		"/readyz":   http.StripPrefix("/readyz", ready),
		"/readyz/":  http.StripPrefix("/readyz", ready),
		"/debug/jobs": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(r.Processes())
		}),
	}
}

// Processes lists the Flink processes the runner manages.
func (r *Runner) Processes() []ProcessInfo {
	r.mu.Lock()
	runs := make([]*run, 0, len(r.runs))
	for _, rn := range r.runs {
		runs = append(runs, rn)
	}
	r.mu.Unlock()
	out := make([]ProcessInfo, 0, len(runs))
	for _, rn := range runs {
		rn.mu.Lock()
		st := rn.tracker.Current()
		rn.mu.Unlock()
		out = append(out, ProcessInfo{Key: rn.key, PID: rn.proc.PID(), RestPort: rn.port, JobID: st.JobID,
			JobState: st.JobState, JM: st.JobManagerDeploymentStatus, Log: rn.proc.Where(), Exited: rn.proc.Exited()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func (r *Runner) reconcile(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	u := newFlinkDeployment()
	err := r.reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, u)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if apierrors.IsNotFound(err) {
		r.stopRun(key, "deleted")
		r.mu.Lock()
		delete(r.written, key)
		delete(r.deleting, key)
		r.mu.Unlock()
		return nil
	}
	if u.GetDeletionTimestamp() != nil {
		return r.reconcileDeletion(ctx, key, u)
	}
	if !hasFinalizer(u) {
		// As the operator: its finalizer first, so that a delete waits for
		// the job to stop. The update brings the object back here.
		return r.setFinalizer(ctx, u.GetNamespace(), u.GetName(), true)
	}
	d, err := ParseDeployment(u)
	if err == nil {
		err = d.Validate(r.opts.Launch.DefaultJar, r.fileExists)
	}
	if err != nil {
		// As the operator's validator: the spec is not deployed, the status
		// carries the error, and a Warning event says why.
		msg := "invalid FlinkDeployment spec: " + err.Error()
		r.event(u, corev1.EventTypeWarning, ReasonValidationError, msg)
		r.mu.Lock()
		cur := r.runs[key]
		r.mu.Unlock()
		if cur != nil && cur.uid != string(u.GetUID()) {
			r.stopRun(key, "object recreated")
			cur = nil
		}
		if cur != nil {
			// As the operator: a job deployed from the last valid spec keeps
			// running; the status carries the error until the spec is valid.
			cur.mu.Lock()
			defer cur.mu.Unlock()
			return r.writeStatus(ctx, u.GetNamespace(), u.GetName(), cur.tracker.SetValidationError(msg))
		}
		// Nothing deployed: nothing starts. The deployed job's id, restore
		// path and spec stay in the status, so a valid spec later resumes it.
		st := Status{
			JobManagerDeploymentStatus: JMMissing, LifecycleState: LifecycleFailed, TaskManagerReplicas: -1,
			Error: msg, ObservedGeneration: u.GetGeneration(),
		}
		st.JobID, _, _ = unstructured.NestedString(u.Object, flink.JobIDPath...)
		st.UpgradeSavepointPath, _, _ = unstructured.NestedString(u.Object, flink.UpgradeSavepointPathPath...)
		if last, _, _ := unstructured.NestedString(u.Object, flink.LastReconciledSpecPath...); last != "" {
			st.ReconciliationState, st.LastReconciledSpec = "DEPLOYED", last
		}
		return r.writeStatus(ctx, u.GetNamespace(), u.GetName(), st)
	}
	if d.Suspended() {
		r.stopRun(key, "suspended")
		st := Status{
			JobManagerDeploymentStatus: JMMissing, LifecycleState: LifecycleSuspended, JobState: JobSuspended,
			ObservedGeneration: d.Generation, ReconciliationState: "DEPLOYED", LastReconciledSpec: d.ReconciledSpec(false),
			ReconciliationTimestamp: time.Now().UnixMilli(), TaskManagerReplicas: 0,
		}
		st.JobID, _, _ = unstructured.NestedString(u.Object, flink.JobIDPath...)
		st.UpgradeSavepointPath = d.DeployedRestorePath
		st.JobName, _, _ = unstructured.NestedString(u.Object, flink.JobNamePath...)
		return r.writeStatus(ctx, d.Namespace, d.Name, st)
	}
	fp := d.Fingerprint()
	r.mu.Lock()
	cur := r.runs[key]
	r.mu.Unlock()
	if cur != nil && cur.uid != d.UID {
		r.stopRun(key, "object recreated")
		cur = nil
		r.mu.Lock()
		delete(r.written, key)
		r.mu.Unlock()
	}
	if cur != nil && cur.fingerprint == fp {
		// Nothing that matters changed; record the generation (the operator
		// updates observedGeneration for ignored changes too).
		cur.mu.Lock()
		defer cur.mu.Unlock()
		cleared := cur.tracker.ClearValidationError()
		if !cleared && cur.tracker.Current().ObservedGeneration == d.Generation {
			return nil
		}
		return r.writeStatus(ctx, d.Namespace, d.Name, cur.tracker.SetGeneration(d.Generation, d.ReconciledSpec(cur.firstDeployment)))
	}
	if cur != nil {
		r.stopRun(key, "spec changed")
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return r.startRun(ctx, d)
}

func (r *Runner) startRun(ctx context.Context, d *Deployment) error {
	port, err := r.exec.Port()
	if err != nil {
		return err
	}
	fail := func(err error) error {
		r.exec.Release(port)
		_ = r.writeStatus(ctx, d.Namespace, d.Name, Status{
			JobManagerDeploymentStatus: JMError, LifecycleState: LifecycleFailed, JobState: JobReconciling,
			Error: err.Error(), ObservedGeneration: d.Generation, TaskManagerReplicas: -1,
			// Keep what identifies the deployed job, so the retry resumes it.
			JobID: d.DeployedJobID, UpgradeSavepointPath: d.DeployedRestorePath,
			ReconciliationState: reconciliationState(d.ReconciledSpecRaw), LastReconciledSpec: d.ReconciledSpecRaw,
		})
		return err
	}
	plan := d.Plan()
	restore := plan.RestorePath
	if plan.ResumeJob != "" && r.opts.LastState != nil {
		// The job's own state, never a fresh start nor initialSavepointPath
		// again. A store that cannot be read fails the deployment (retried)
		// rather than starting without the state.
		dir := CheckpointDir(r.opts.Launch, d)
		if dir == "" {
			klog.InfoS("No checkpoint directory: the job starts without its last state", "key", d.Key(), "jobId", plan.ResumeJob)
		} else if last, err := r.opts.LastState(ctx, dir, plan.ResumeJob); err != nil {
			return fail(fmt.Errorf("reading the last state of job %s under %s: %w", plan.ResumeJob, dir, err))
		} else if last != "" {
			restore = last
		}
	}
	l, err := BuildLaunch(r.opts.Launch, d, port, plan.JobID, restore)
	if err != nil {
		return fail(err)
	}
	for _, n := range l.Notes {
		klog.InfoS("Note", "key", d.Key(), "note", n)
	}
	p, err := r.exec.Start(ctx, d, l, port)
	if err != nil {
		return fail(err)
	}
	klog.InfoS("Started Flink process", "key", d.Key(), "plan", plan.Kind, "executor", r.exec.Name(), "pid", p.PID(), "restPort", port,
		"jobId", l.JobID, "jar", l.Jar, "savepointPath", l.SavepointPath, "where", p.Where())
	from := "empty state"
	if l.SavepointPath != "" {
		from = l.SavepointPath
	}
	r.eventf(d, corev1.EventTypeNormal, ReasonSubmit, "Starting deployment (%s): job %s from %s", plan.Kind, l.JobID, from)
	tm := int64(1)
	if r.opts.Launch.TaskSlots != nil && *r.opts.Launch.TaskSlots == 0 {
		tm = 0
	}
	launched := Status{
		JobManagerDeploymentStatus: JMDeploying, LifecycleState: LifecycleDeployed,
		JobID: l.JobID, JobState: JobReconciling, UpgradeSavepointPath: l.SavepointPath,
		ObservedGeneration: d.Generation, ReconciliationState: "DEPLOYED",
		ReconciliationTimestamp: time.Now().UnixMilli(), LastReconciledSpec: d.ReconciledSpec(plan.Kind == PlanFirst),
		TaskManagerReplicas: tm, Log: p.Where(), PID: p.PID(),
	}
	if p.PID() > 0 {
		// A local process: its address, which only this host reaches. A pod's
		// REST API is its <name>-rest Service, as under the operator.
		launched.RestURL = p.RESTBase()
	}
	runCtx, cancel := context.WithCancel(context.Background())
	rn := &run{key: d.Key(), ns: d.Namespace, name: d.Name, uid: d.UID, fingerprint: d.Fingerprint(), firstDeployment: plan.Kind == PlanFirst, launch: l, port: port,
		proc: p, cancel: cancel, monitorDone: make(chan struct{}), tracker: NewTracker(launched)}
	r.mu.Lock()
	r.runs[rn.key] = rn
	r.mu.Unlock()
	rn.mu.Lock()
	err = r.writeStatus(ctx, d.Namespace, d.Name, launched)
	rn.mu.Unlock()
	if err != nil {
		klog.ErrorS(err, "Writing status", "key", rn.key)
	}
	go r.monitor(runCtx, rn)
	return nil
}

// monitor polls the process's REST API every PollInterval and writes status
// changes, until the process exits or the run is stopped.
func (r *Runner) monitor(ctx context.Context, rn *run) {
	defer close(rn.monitorDone)
	client := &http.Client{Timeout: 5 * time.Second}
	tick := time.NewTicker(r.opts.PollInterval)
	defer tick.Stop()
	observe := func(o Observation) {
		rn.mu.Lock()
		defer rn.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		prev := rn.tracker.Current()
		st := rn.tracker.Observe(o)
		if st.JobState != prev.JobState || st.JobManagerDeploymentStatus != prev.JobManagerDeploymentStatus {
			klog.InfoS("Job status", "key", rn.key, "jobId", st.JobID, "state", st.JobState,
				"jobManagerDeploymentStatus", st.JobManagerDeploymentStatus, "lifecycleState", st.LifecycleState)
		}
		if err := r.writeStatus(ctx, rn.ns, rn.name, st); err != nil && ctx.Err() == nil {
			klog.ErrorS(err, "Writing status", "key", rn.key)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-rn.proc.Done():
			what := "Flink process"
			if pid := rn.proc.PID(); pid > 0 {
				what = fmt.Sprintf("Flink process %d", pid)
			}
			msg := fmt.Sprintf("%s exited (%s); last lines of %s:\n%s",
				what, rn.proc.ExitText(), rn.proc.Where(), rn.proc.LogTail(15))
			klog.InfoS("Flink process exited", "key", rn.key, "where", rn.proc.Where(), "err", rn.proc.ExitText())
			observe(Observation{Exited: true, ExitMsg: msg})
			return
		case <-tick.C:
			base := rn.proc.RESTBase()
			if base == "" {
				observe(Observation{RestErr: errors.New("the JobManager has no address yet")})
				continue
			}
			jobs, err := FetchOverview(ctx, client, base)
			if rn.proc.Exited() {
				continue // reported by the done case
			}
			observe(Observation{RestErr: err, Jobs: jobs})
		}
	}
}

// writeStatus replaces .status through the status subresource, retrying on
// conflicts, unless it equals the last status written for the object.
func (r *Runner) writeStatus(ctx context.Context, ns, name string, st Status) error {
	key := ns + "/" + name
	r.mu.Lock()
	prev, ok := r.written[key]
	r.mu.Unlock()
	cmp := st
	cmp.ReconciliationTimestamp = prev.ReconciliationTimestamp
	if ok && cmp == prev {
		return nil
	}
	res := r.client.Resource(flink.GVR).Namespace(ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := res.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		obj.Object["status"] = st.ToMap()
		_, err = res.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.written[key] = st
	r.mu.Unlock()
	return nil
}

// stopRun stops the process of key, if any: SIGTERM, SIGKILL after StopGrace.
func (r *Runner) stopRun(key, why string) {
	r.mu.Lock()
	rn := r.runs[key]
	delete(r.runs, key)
	r.mu.Unlock()
	if rn == nil {
		return
	}
	r.stop(rn, why)
}

func (r *Runner) stop(rn *run, why string) {
	rn.cancel()
	<-rn.monitorDone
	start := time.Now()
	killed := rn.proc.Stop(r.opts.StopGrace)
	r.exec.Release(rn.port)
	klog.InfoS("Stopped Flink process", "key", rn.key, "where", rn.proc.Where(), "reason", why,
		"took", time.Since(start).Round(time.Millisecond).String(), "sigkill", killed)
}

// stopAll stops every process concurrently.
func (r *Runner) stopAll() {
	r.mu.Lock()
	runs := r.runs
	r.runs = map[string]*run{}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, rn := range runs {
		wg.Add(1)
		go func(rn *run) {
			defer wg.Done()
			r.stop(rn, "runner shutdown")
		}(rn)
	}
	wg.Wait()
}

var errNoProcess = errors.New("no process")

// PID returns the PID of key's Flink process.
func (r *Runner) PID(key string) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rn := r.runs[key]; rn != nil {
		return rn.proc.PID(), nil
	}
	return 0, errNoProcess
}

func reconciliationState(lastReconciledSpec string) string {
	if lastReconciledSpec == "" {
		return ""
	}
	return "DEPLOYED"
}

// Event reasons, as the operator's (EventRecorder.Reason).
const (
	ReasonValidationError = "ValidationError"
	ReasonSubmit          = "Submit"
)

// event records an event on the FlinkDeployment obj in its member cluster.
func (r *Runner) event(obj *unstructured.Unstructured, eventType, reason, message string) {
	if r.recorder != nil {
		r.recorder.Event(obj, eventType, reason, message)
	}
}

func (r *Runner) eventf(d *Deployment, eventType, reason, format string, args ...interface{}) {
	if r.recorder == nil {
		return
	}
	ref := &corev1.ObjectReference{APIVersion: flink.GroupVersion.String(), Kind: flink.Kind,
		Namespace: d.Namespace, Name: d.Name, UID: types.UID(d.UID)}
	r.recorder.Eventf(ref, eventType, reason, format, args...)
}

func (r *Runner) fileExists(p string) bool {
	if r.opts.Launch.FileExists != nil {
		return r.opts.Launch.FileExists(p)
	}
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
