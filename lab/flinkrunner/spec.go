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
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GVR is the FlinkDeployment resource served by flink-kubernetes-operator's CRD.
var GVR = schema.GroupVersionResource{Group: "flink.apache.org", Version: "v1beta1", Resource: "flinkdeployments"}

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
	// SpecJSON is the raw spec, recorded as reconciliationStatus.lastReconciledSpec.
	SpecJSON string
	// ReconciledJobID is status.jobStatus.jobId when status.reconciliationStatus.lastReconciledSpec
	// equals SpecJSON: the job this runner (or an earlier run of it) deployed for the same
	// spec. A restart of the runner, like a JobManager failover under the operator, keeps
	// that job ID, so the checkpoints stay under <checkpoint dir>/<jobId>/.
	ReconciledJobID string
	// DeployedJobID is status.jobStatus.jobId whatever spec it was deployed
	// for: the job whose state a restart of the runner or a spec change
	// resumes from (last state). "" on an object that was never deployed.
	DeployedJobID string
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
	d.DeployedJobID, _, _ = unstructured.NestedString(u.Object, "status", "jobStatus", "jobId")
	if last, _, _ := unstructured.NestedString(u.Object, "status", "reconciliationStatus", "lastReconciledSpec"); last != "" && last == d.SpecJSON {
		d.ReconciledJobID = d.DeployedJobID
	}
	d.FlinkConfiguration = map[string]string{}
	if fc, ok := spec["flinkConfiguration"]; ok && fc != nil {
		m, ok := fc.(map[string]interface{})
		if !ok {
			return nil, fmt.Errorf("spec.flinkConfiguration: expected an object, got %T", fc)
		}
		flatten("", m, d.FlinkConfiguration)
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
			j.JarURI = scalar(v)
		case "entryClass":
			j.EntryClass = scalar(v)
		case "state":
			j.State = scalar(v)
		case "upgradeMode":
			j.UpgradeMode = scalar(v)
		case "initialSavepointPath":
			j.InitialSavepointPath = scalar(v)
		case "args":
			list, ok := v.([]interface{})
			if !ok {
				err = fmt.Errorf("expected a list, got %T", v)
				break
			}
			for _, a := range list {
				j.Args = append(j.Args, scalar(a))
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
				if pb, err = strconv.ParseBool(scalar(v)); err == nil {
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
	return d, nil
}

// flatten turns nested flinkConfiguration objects into dotted Flink keys.
func flatten(prefix string, m map[string]interface{}, out map[string]string) {
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if sub, ok := v.(map[string]interface{}); ok {
			flatten(key, sub, out)
			continue
		}
		out[key] = scalar(v)
	}
}

// scalar renders a JSON value the way Flink expects it in a configuration
// (lists are ';'-separated, like Flink's list options).
func scalar(v interface{}) string {
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
	case []interface{}:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = scalar(e)
		}
		return strings.Join(parts, ";")
	default:
		return fmt.Sprint(t)
	}
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

// CheckpointDirKeys are the Flink configuration keys of the checkpoint
// directory, newest first (Flink 1.20 reads all three).
var CheckpointDirKeys = []string{"execution.checkpointing.dir", "state.checkpoints.dir", "state.backend.fs.checkpointdir"}

// CheckpointDir is the checkpoint directory of deployment d under the runner's
// configuration cfg ("" = none): spec.flinkConfiguration over --flink-conf.
func CheckpointDir(cfg LaunchConfig, d *Deployment) string {
	for _, conf := range []map[string]string{d.FlinkConfiguration, cfg.FlinkConf} {
		for _, k := range CheckpointDirKeys {
			if v := conf[k]; v != "" {
				return v
			}
		}
	}
	return ""
}

// BuildLaunch maps a FlinkDeployment to the command line of its Flink process.
// Precedence: runner --flink-conf < spec.flinkConfiguration < values derived
// from spec.job and the runner (rest.*, parallelism, restore path, slots, job id).
//
// lastState is the latest completed checkpoint of jobID when the runner starts
// again a job it (or an earlier run of it) had deployed for the same spec: the
// job resumes from its own state, as a JobManager failover under the operator
// does, and initialSavepointPath is not read again (the operator honours it on
// the first deployment only). "" means the first deployment of the spec, or a
// job that had completed no checkpoint: then initialSavepointPath applies.
func BuildLaunch(cfg LaunchConfig, d *Deployment, restPort int, jobID, lastState string) (*Launch, error) {
	if d.Job == nil {
		return nil, fmt.Errorf("%s: spec.job is not set (session clusters are not supported)", d.Key())
	}
	exists := cfg.FileExists
	if exists == nil {
		exists = func(p string) bool { st, err := os.Stat(p); return err == nil && !st.IsDir() }
	}
	l := &Launch{Conf: map[string]string{}, JobArgs: append([]string(nil), d.Job.Args...)}

	// Jar.
	switch p, ok := LocalJarPath(d.Job.JarURI); {
	case ok && exists(p):
		l.Jar = p
	case ok:
		l.Jar = cfg.DefaultJar
		l.Notes = append(l.Notes, fmt.Sprintf("jarURI %s does not exist on this host; using the default jar %s", d.Job.JarURI, cfg.DefaultJar))
	default:
		l.Jar = cfg.DefaultJar
		if d.Job.JarURI != "" {
			l.Notes = append(l.Notes, fmt.Sprintf("jarURI %s is not a local path; using the default jar %s", d.Job.JarURI, cfg.DefaultJar))
		}
	}
	if l.Jar == "" {
		return nil, fmt.Errorf("%s: no jar: jarURI %q is not a local file and --default-jar is not set", d.Key(), d.Job.JarURI)
	}
	if d.Job.EntryClass != "" && d.Job.EntryClass != LabEntryClass {
		l.Notes = append(l.Notes, fmt.Sprintf("entryClass %s ignored: LocalRunner always runs %s", d.Job.EntryClass, LabEntryClass))
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
	l.Conf[KeyRestAddress] = "127.0.0.1"
	l.Conf[KeyRestBindAddress] = "127.0.0.1"
	if d.Job.Parallelism != nil && *d.Job.Parallelism > 0 {
		l.Conf[KeyParallelism] = strconv.FormatInt(*d.Job.Parallelism, 10)
	}
	// The operator removes any user-set restore path and sets it only from
	// initialSavepointPath (first deploy / savepoint redeploy) in savepoint or
	// last-state mode.
	delete(l.Conf, KeySavepointPath)
	delete(l.Conf, KeyStateRecoveryPath)
	if lastState != "" {
		l.Conf[KeySavepointPath] = lastState
		l.SavepointPath = lastState
		l.Notes = append(l.Notes, fmt.Sprintf("job %s resumes from its own latest checkpoint %s (last state); initialSavepointPath is read on the first deployment only", jobID, lastState))
	} else if sp := d.Job.InitialSavepointPath; sp != "" {
		switch d.Job.UpgradeMode {
		case "savepoint", "last-state":
			l.Conf[KeySavepointPath] = sp
			l.SavepointPath = sp
		default:
			l.Notes = append(l.Notes, fmt.Sprintf("initialSavepointPath ignored: upgradeMode %q is not savepoint or last-state", d.Job.UpgradeMode))
		}
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
