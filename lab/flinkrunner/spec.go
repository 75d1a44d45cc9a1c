// Package flinkrunner is the lab's stand-in for flink-kubernetes-operator: it
// watches FlinkDeployments (flink.apache.org/v1beta1) in one member cluster and,
// instead of creating JobManager/TaskManager pods, runs each job in a local
// Flink MiniCluster JVM (lab/flink's LocalRunner), then reports the job's state
// in the FlinkDeployment's status the way the operator does.
package flinkrunner

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karmada-failover/lab/apis/flink"
)

const (
	// DefaultMainClass runs the lab job in a MiniCluster (lab/flink).
	DefaultMainClass = "io.karmadafailover.lab.flink.LocalRunner"
	// LabEntryClass is the only job LocalRunner can run.
	LabEntryClass = "io.karmadafailover.lab.flink.FailoverLabJob"

	// Flink configuration keys the runner sets or strips.
	KeyRestPort           = "rest.port"
	KeyRestBindPort       = "rest.bind-port"
	KeyRestAddress        = "rest.address"
	KeyRestBindAddress    = "rest.bind-address"
	KeyParallelism        = "parallelism.default"
	KeySavepointPath      = "execution.savepoint.path"
	KeyStateRecoveryPath  = "execution.state-recovery.path"
	KeyIgnoreUnclaimed    = "execution.savepoint.ignore-unclaimed-state"
	KeyIgnoreUnclaimedNew = "execution.state-recovery.ignore-unclaimed-state"
	KeyTaskSlots          = "taskmanager.numberOfTaskSlots"
	KeyScheduler          = "jobmanager.scheduler"
	KeyFixedJobID         = "$internal.pipeline.job-id"

	StateRunning   = "running"
	StateSuspended = "suspended"

	UpgradeLastState = "last-state"
	UpgradeSavepoint = "savepoint"
	UpgradeStateless = "stateless"
)

// JavaAddOpens are the Java 17 flags Flink 1.20 needs (same list as
// lab/flink/run-local.sh and the pom's flink.jvm.opens).
var JavaAddOpens = []string{
	"--add-opens=java.base/java.util=ALL-UNNAMED",
	"--add-opens=java.base/java.lang=ALL-UNNAMED",
	"--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
	"--add-opens=java.base/java.net=ALL-UNNAMED",
	"--add-opens=java.base/java.io=ALL-UNNAMED",
	"--add-opens=java.base/java.nio=ALL-UNNAMED",
	"--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
	"--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
	"--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
	"--add-opens=java.base/java.time=ALL-UNNAMED",
	"--add-opens=java.base/java.text=ALL-UNNAMED",
	"--add-opens=java.base/java.math=ALL-UNNAMED",
	"--add-opens=java.sql/java.sql=ALL-UNNAMED",
}

// JobSpec is the part of spec.job the runner reads.
type JobSpec struct {
	JarURI                 string   `json:"jarURI,omitempty"`
	EntryClass             string   `json:"entryClass,omitempty"`
	Args                   []string `json:"args,omitempty"`
	Parallelism            *int64   `json:"parallelism,omitempty"`
	State                  string   `json:"state,omitempty"`
	UpgradeMode            string   `json:"upgradeMode,omitempty"`
	InitialSavepointPath   string   `json:"initialSavepointPath,omitempty"`
	AllowNonRestoredState  *bool    `json:"allowNonRestoredState,omitempty"`
	SavepointRedeployNonce *int64   `json:"savepointRedeployNonce,omitempty"`
}

// Deployment is the part of a FlinkDeployment the runner reads.
type Deployment struct {
	Namespace, Name    string
	UID                string
	Generation         int64
	FlinkConfiguration map[string]string
	RestartNonce       *int64
	Job                *JobSpec // nil: session cluster, not handled
	// SpecJSON is the raw spec; reconciliationStatus.lastReconciledSpec records
	// it in the operator's form (see ReconciledSpec).
	SpecJSON string
	// DeployedJobID is status.jobStatus.jobId: the job deployed for this object
	// (by this process or an earlier run of the runner), whatever spec it was
	// deployed for. "" on an object never deployed: its next deployment is the
	// first one.
	DeployedJobID string
	// DeployedRestorePath is status.jobStatus.upgradeSavepointPath: the
	// snapshot the deployed job was started from. With HA, Flink keeps it in
	// the job's checkpoint store until the job completes a checkpoint of its
	// own, so a recovery before that restores it again.
	DeployedRestorePath string
	// SpecReconciled: the spec is the one last reconciled (deployed), so a new
	// process is a recovery of the same job, not an upgrade.
	SpecReconciled bool
	// ReconciledRedeployNonce is spec.job.savepointRedeployNonce of the last
	// reconciled spec.
	ReconciledRedeployNonce *int64
	// ReconciledSpecRaw is status.reconciliationStatus.lastReconciledSpec as read.
	ReconciledSpecRaw string
}

// Key is namespace/name.
func (d *Deployment) Key() string { return d.Namespace + "/" + d.Name }

// Suspended reports whether spec.job.state is suspended.
func (d *Deployment) Suspended() bool { return d.Job != nil && d.Job.State == StateSuspended }

// Fingerprint covers every spec field whose change restarts the Flink process:
// jarURI, entryClass, args, parallelism, flinkConfiguration, job state,
// restartNonce and savepointRedeployNonce. Fields the operator marks
// @SpecDiff(IGNORE) (upgradeMode, initialSavepointPath, allowNonRestoredState)
// do not restart a running job; they are read at the next (re)start.
func (d *Deployment) Fingerprint() string {
	fp := struct {
		Jar, Entry    string
		Args          []string
		Parallelism   *int64
		Conf          map[string]string
		State         string
		RestartNonce  *int64
		RedeployNonce *int64
	}{Conf: d.FlinkConfiguration, RestartNonce: d.RestartNonce}
	if j := d.Job; j != nil {
		fp.Jar, fp.Entry, fp.Args, fp.Parallelism = j.JarURI, j.EntryClass, j.Args, j.Parallelism
		fp.State, fp.RedeployNonce = j.State, j.SavepointRedeployNonce
	}
	b, _ := json.Marshal(fp) // map keys are sorted by encoding/json
	return string(b)
}

// ParseDeployment reads a FlinkDeployment from its unstructured form.
func ParseDeployment(u *unstructured.Unstructured) (*Deployment, error) {
	d := &Deployment{Namespace: u.GetNamespace(), Name: u.GetName(), UID: string(u.GetUID()), Generation: u.GetGeneration()}
	spec, _, err := unstructured.NestedMap(u.Object, "spec")
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	if b, err := json.Marshal(spec); err == nil {
		d.SpecJSON = string(b)
	}
	d.DeployedJobID, _, _ = unstructured.NestedString(u.Object, flink.JobIDPath...)
	d.DeployedRestorePath, _, _ = unstructured.NestedString(u.Object, flink.UpgradeSavepointPathPath...)
	d.ReconciledSpecRaw, _, _ = unstructured.NestedString(u.Object, flink.LastReconciledSpecPath...)
	d.FlinkConfiguration = map[string]string{}
	if fc, ok := spec["flinkConfiguration"]; ok && fc != nil {
		m, ok := fc.(map[string]interface{})
		if !ok {
			return nil, fmt.Errorf("spec.flinkConfiguration: expected an object, got %T", fc)
		}
		d.FlinkConfiguration = flink.Configuration(m)
	}
	if v, ok := spec["restartNonce"]; ok && v != nil {
		n, err := toInt64(v)
		if err != nil {
			return nil, fmt.Errorf("spec.restartNonce: %w", err)
		}
		d.RestartNonce = &n
	}
	jv, ok := spec["job"]
	if !ok || jv == nil {
		return d, nil
	}
	jm, ok := jv.(map[string]interface{})
	if !ok {
		return nil, fmt.Errorf("spec.job: expected an object, got %T", jv)
	}
	j := &JobSpec{State: StateRunning}
	for k, v := range jm {
		if v == nil {
			continue
		}
		var err error
		switch k {
		case "jarURI":
			j.JarURI = flink.Value(v)
		case "entryClass":
			j.EntryClass = flink.Value(v)
		case "state":
			j.State = flink.Value(v)
		case "upgradeMode":
			j.UpgradeMode = flink.Value(v)
		case "initialSavepointPath":
			j.InitialSavepointPath = flink.Value(v)
		case "args":
			list, ok := v.([]interface{})
			if !ok {
				err = fmt.Errorf("expected a list, got %T", v)
				break
			}
			for _, a := range list {
				j.Args = append(j.Args, flink.Value(a))
			}
		case "parallelism":
			var n int64
			if n, err = toInt64(v); err == nil {
				j.Parallelism = &n
			}
		case "savepointRedeployNonce":
			var n int64
			if n, err = toInt64(v); err == nil {
				j.SavepointRedeployNonce = &n
			}
		case "allowNonRestoredState":
			b, ok := v.(bool)
			if !ok {
				var pb bool
				if pb, err = strconv.ParseBool(flink.Value(v)); err == nil {
					b = pb
				}
			}
			if err == nil {
				j.AllowNonRestoredState = &b
			}
		}
		if err != nil {
			return nil, fmt.Errorf("spec.job.%s: %w", k, err)
		}
	}
	if j.State == "" {
		j.State = StateRunning
	}
	d.Job = j
	if d.ReconciledSpecRaw != "" {
		// Reconciled means no change that redeploys the job: fields the
		// operator ignores in its spec diff (upgradeMode, initialSavepointPath,
		// ...) may differ.
		if lastSpec, ok := parseReconciledSpec(d.ReconciledSpecRaw); ok {
			if last, err := ParseDeployment(&unstructured.Unstructured{Object: map[string]interface{}{"spec": lastSpec}}); err == nil && last.Job != nil {
				d.SpecReconciled = last.Fingerprint() == d.Fingerprint()
				d.ReconciledRedeployNonce = last.Job.SavepointRedeployNonce
			}
		}
	}
	return d, nil
}

// parseReconciledSpec reads reconciliationStatus.lastReconciledSpec: the
// operator's form, {"spec": {...}, "resource_metadata": {...}}, or a bare spec
// (written by earlier versions of the runner).
func parseReconciledSpec(s string) (map[string]interface{}, bool) {
	var m map[string]interface{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, false
	}
	if spec, ok := m["spec"].(map[string]interface{}); ok {
		if _, meta := m["resource_metadata"]; meta {
			return spec, true
		}
	}
	return m, true
}

// ReconciledSpec is reconciliationStatus.lastReconciledSpec as the operator
// writes it: the spec with the metadata it was reconciled at
// (SpecUtils.writeSpecWithMeta).
func (d *Deployment) ReconciledSpec(firstDeployment bool) string {
	var spec map[string]interface{}
	if err := json.Unmarshal([]byte(d.SpecJSON), &spec); err != nil || spec == nil {
		spec = map[string]interface{}{}
	}
	b, _ := json.Marshal(map[string]interface{}{
		"spec": spec,
		"resource_metadata": map[string]interface{}{
			"apiVersion":      flink.GroupVersion.String(),
			"metadata":        map[string]interface{}{"generation": d.Generation},
			"firstDeployment": firstDeployment,
		},
	})
	return string(b)
}

// Plan kinds: why a Flink process is started, by the operator's rules.
const (
	// PlanFirst: the object was never deployed: initialSavepointPath, whatever
	// the upgradeMode (AbstractFlinkResourceReconciler on first deployment).
	PlanFirst = "first deployment"
	// PlanRecover: the spec is the one deployed; the process is gone (runner
	// restarted, member back after a crash). Under the operator the JobManager
	// pod comes back and, with HA, recovers the same job from its latest
	// completed checkpoint: same job id, and Flink numbers the next checkpoint
	// after the one it restored, so the job's directory holds one sequence.
	PlanRecover = "recovery"
	// PlanLastState: spec change with upgradeMode last-state: same job id, its
	// latest completed checkpoint (HA metadata).
	PlanLastState = "last-state upgrade"
	// PlanSavepoint: spec change with upgradeMode savepoint: a new job id, from
	// the state of the job it replaces. The operator takes a savepoint first;
	// the runner takes none and uses that job's latest completed checkpoint.
	PlanSavepoint = "savepoint upgrade"
	// PlanStateless: spec change with upgradeMode stateless (the operator's
	// default): a new job id, empty state.
	PlanStateless = "stateless upgrade"
	// PlanRedeploy: savepointRedeployNonce changed: a new job id, from
	// initialSavepointPath (empty state when it is unset).
	PlanRedeploy = "savepoint redeploy"
)

// Plan is how the runner deploys a FlinkDeployment's job.
type Plan struct {
	Kind string
	// JobID is the job id of the new process; "" draws a new one. The operator
	// rotates the id on every deployment but a last-state one
	// (ApplicationReconciler.setJobIdIfNecessary); a job id pinned in
	// flinkConfiguration ($internal.pipeline.job-id) wins either way.
	JobID string
	// ResumeJob is the job whose latest completed checkpoint the process
	// restores ("" none); RestorePath is restored when ResumeJob is "" or has
	// completed no checkpoint.
	ResumeJob   string
	RestorePath string
}

// Plan decides how the next process of d starts.
func (d *Deployment) Plan() Plan {
	j := d.Job
	switch {
	case d.DeployedJobID == "":
		return Plan{Kind: PlanFirst, RestorePath: j.InitialSavepointPath}
	case d.SpecReconciled:
		return Plan{Kind: PlanRecover, JobID: d.DeployedJobID, ResumeJob: d.DeployedJobID, RestorePath: d.DeployedRestorePath}
	case !sameNonce(j.SavepointRedeployNonce, d.ReconciledRedeployNonce):
		return Plan{Kind: PlanRedeploy, RestorePath: j.InitialSavepointPath}
	}
	switch j.UpgradeMode {
	case UpgradeLastState:
		return Plan{Kind: PlanLastState, JobID: d.DeployedJobID, ResumeJob: d.DeployedJobID, RestorePath: d.DeployedRestorePath}
	case UpgradeSavepoint:
		return Plan{Kind: PlanSavepoint, ResumeJob: d.DeployedJobID, RestorePath: d.DeployedRestorePath}
	}
	return Plan{Kind: PlanStateless}
}

func sameNonce(a, b *int64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// Validate refuses what the runner cannot run as the operator would, with the
// reason the object's status and a Warning event report: a session cluster (no
// spec.job), an entry class other than the lab job's, a jar it cannot reach.
// defaultJar is the runner's --default-jar; a jarURI naming a file that only
// exists in the job image (local:///opt/flink/usrlib/<name>) runs that jar
// when its file name is the default jar's.
func (d *Deployment) Validate(defaultJar string, exists func(string) bool) error {
	if d.Job == nil {
		return fmt.Errorf("spec.job is not set: session clusters are not supported by the lab's FlinkDeployment runner (it runs application deployments only)")
	}
	if e := d.Job.EntryClass; e != "" && e != LabEntryClass {
		return fmt.Errorf("spec.job.entryClass %s is not supported by the lab's FlinkDeployment runner: it runs the lab job %s only", e, LabEntryClass)
	}
	if _, err := d.jar(defaultJar, exists); err != nil {
		return err
	}
	return nil
}

// jar is the local jar that runs spec.job.jarURI: the file itself when it is
// on this host, the default jar for an empty jarURI or an image path with the
// default jar's file name.
func (d *Deployment) jar(defaultJar string, exists func(string) bool) (string, error) {
	uri := d.Job.JarURI
	if uri == "" {
		if defaultJar == "" {
			return "", fmt.Errorf("spec.job.jarURI is not set and the runner has no --default-jar")
		}
		return defaultJar, nil
	}
	p, ok := LocalJarPath(uri)
	if !ok {
		return "", fmt.Errorf("spec.job.jarURI %s is not supported by the lab's FlinkDeployment runner: it runs local jars (local://, file:// or an absolute path), it does not fetch remote ones", uri)
	}
	if exists(p) {
		return p, nil
	}
	if defaultJar != "" && path.Base(p) == path.Base(defaultJar) {
		return defaultJar, nil
	}
	return "", fmt.Errorf("spec.job.jarURI %s: no such file on this host, and its name is not the lab job's jar (%s)", uri, path.Base(defaultJar))
}

func toInt64(v interface{}) (int64, error) {
	switch t := v.(type) {
	case int64:
		return t, nil
	case int:
		return int64(t), nil
	case float64:
		if t != float64(int64(t)) {
			return 0, fmt.Errorf("not an integer: %v", t)
		}
		return int64(t), nil
	case string:
		return strconv.ParseInt(t, 10, 64)
	case json.Number:
		return t.Int64()
	}
	return 0, fmt.Errorf("not an integer: %T", v)
}

// LaunchConfig is the runner-wide part of every Flink process's command line.
type LaunchConfig struct {
	Java       string            // java binary; "java" when empty
	JavaOpts   []string          // extra JVM flags, e.g. -Xmx512m
	MainClass  string            // DefaultMainClass when empty
	DefaultJar string            // used when jarURI is not a local path (or does not exist here)
	FlinkConf  map[string]string // runner defaults, overridden by spec.flinkConfiguration
	// TaskSlots, when set, is forced on every job; 0 means "no TaskManager"
	// (plus the adaptive scheduler, so jobs stay CREATED).
	TaskSlots *int
	// FileExists checks local jar paths; os.Stat when nil (tests replace it).
	FileExists func(string) bool
	// RESTAddress is the address a job's REST API binds and the one it
	// advertises; 127.0.0.1 for both when nil (the runner sets its executor's).
	RESTAddress func(d *Deployment) (bind, advertise string)
}

// Launch is one Flink process to start.
type Launch struct {
	Jar     string            // jar on the classpath
	Conf    map[string]string // effective Flink configuration (--conf k=v)
	JobArgs []string          // program arguments (spec.job.args)
	JobID   string            // $internal.pipeline.job-id, the jobId reported before REST answers
	// SavepointPath is the snapshot the job restores from ("" = fresh start).
	SavepointPath string
	Argv          []string // full command line, Argv[0] is the java binary
	Notes         []string // things the runner ignored or replaced, for the log
}

// LocalJarPath returns the local file behind jarURI: local:///p, file:///p or
// /p. ok is false for remote or relative URIs.
func LocalJarPath(jarURI string) (string, bool) {
	switch {
	case strings.HasPrefix(jarURI, "local://"):
		p := strings.TrimPrefix(jarURI, "local://")
		return p, strings.HasPrefix(p, "/")
	case strings.HasPrefix(jarURI, "file://"):
		p := strings.TrimPrefix(jarURI, "file://")
		return p, strings.HasPrefix(p, "/")
	case strings.HasPrefix(jarURI, "/"):
		return jarURI, true
	}
	return "", false
}

// NewJobID returns a random Flink JobID (32 hex digits), as the operator
// generates one for every non-last-state deployment.
func NewJobID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// CheckpointDir is the checkpoint directory of deployment d under the runner's
// configuration cfg ("" = none): spec.flinkConfiguration over --flink-conf.
func CheckpointDir(cfg LaunchConfig, d *Deployment) string {
	return flink.First(flink.CheckpointDirKeys, d.FlinkConfiguration, cfg.FlinkConf)
}

// BuildLaunch maps a FlinkDeployment to the command line of its Flink process.
// Precedence: runner --flink-conf < spec.flinkConfiguration < values derived
// from spec.job and the runner (rest.*, parallelism, restore path, slots, job id).
//
// jobID is the job id of the process ("" draws a new one) and restorePath the
// snapshot it restores ("" = empty state): both come from d.Plan and, for a
// resumed job, its latest completed checkpoint (Runner.startRun).
func BuildLaunch(cfg LaunchConfig, d *Deployment, restPort int, jobID, restorePath string) (*Launch, error) {
	exists := cfg.FileExists
	if exists == nil {
		exists = func(p string) bool { st, err := os.Stat(p); return err == nil && !st.IsDir() }
	}
	if err := d.Validate(cfg.DefaultJar, exists); err != nil {
		return nil, err
	}
	l := &Launch{Conf: map[string]string{}, JobArgs: append([]string(nil), d.Job.Args...)}
	l.Jar, _ = d.jar(cfg.DefaultJar, exists)
	if p, ok := LocalJarPath(d.Job.JarURI); ok && p != l.Jar {
		l.Notes = append(l.Notes, fmt.Sprintf("jarURI %s is a path in the job image; running the lab's copy of that jar, %s", d.Job.JarURI, l.Jar))
	}

	// Configuration.
	for k, v := range cfg.FlinkConf {
		l.Conf[k] = v
	}
	for k, v := range d.FlinkConfiguration {
		l.Conf[k] = v
	}
	port := strconv.Itoa(restPort)
	l.Conf[KeyRestPort] = port
	l.Conf[KeyRestBindPort] = port
	bind, advertise := "127.0.0.1", "127.0.0.1"
	if cfg.RESTAddress != nil {
		bind, advertise = cfg.RESTAddress(d)
	}
	l.Conf[KeyRestAddress] = advertise
	l.Conf[KeyRestBindAddress] = bind
	if d.Job.Parallelism != nil && *d.Job.Parallelism > 0 {
		l.Conf[KeyParallelism] = strconv.FormatInt(*d.Job.Parallelism, 10)
	}
	// The operator removes any user-set restore path and sets only the one
	// its deployment restores (ApplicationReconciler.deploy).
	delete(l.Conf, KeySavepointPath)
	delete(l.Conf, KeyStateRecoveryPath)
	if restorePath != "" {
		l.Conf[KeySavepointPath] = restorePath
		l.SavepointPath = restorePath
	}
	if d.Job.AllowNonRestoredState != nil {
		delete(l.Conf, KeyIgnoreUnclaimedNew)
		l.Conf[KeyIgnoreUnclaimed] = strconv.FormatBool(*d.Job.AllowNonRestoredState)
	}
	if cfg.TaskSlots != nil {
		l.Conf[KeyTaskSlots] = strconv.Itoa(*cfg.TaskSlots)
		if *cfg.TaskSlots == 0 {
			l.Conf[KeyScheduler] = "adaptive"
		}
	}
	if user := l.Conf[KeyFixedJobID]; user != "" {
		l.JobID = user
	} else {
		if jobID == "" {
			jobID = NewJobID()
		}
		l.JobID = jobID
		l.Conf[KeyFixedJobID] = jobID
	}

	// Command line.
	java := cfg.Java
	if java == "" {
		java = "java"
	}
	mainClass := cfg.MainClass
	if mainClass == "" {
		mainClass = DefaultMainClass
	}
	argv := []string{java}
	argv = append(argv, JavaAddOpens...)
	argv = append(argv, cfg.JavaOpts...)
	argv = append(argv, "-cp", l.Jar, mainClass)
	keys := make([]string, 0, len(l.Conf))
	for k := range l.Conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		argv = append(argv, "--conf", k+"="+l.Conf[k])
	}
	l.Argv = append(argv, l.JobArgs...)
	return l, nil
}
