package flinkrunner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/karmada-failover/lab/restore/checkpoint"
)

func mustParse(t *testing.T, manifest string) *Deployment {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	d, err := ParseDeployment(u)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

const baseManifest = `
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata: {name: job1, namespace: ns1, generation: 3}
spec:
  flinkConfiguration:
    state.checkpoints.dir: file:///tmp/ckpt
    execution.checkpointing.num-retained: 3
    s3:
      endpoint: http://spec:8333
  job:
    jarURI: local:///opt/lab/job.jar
    entryClass: io.karmadafailover.lab.flink.FailoverLabJob
    args: ["--rate", "50", "--keys", "8"]
    parallelism: 1
    upgradeMode: savepoint
`

func TestParseDeployment(t *testing.T) {
	d := mustParse(t, baseManifest)
	if d.Key() != "ns1/job1" || d.Generation != 3 {
		t.Fatalf("key/generation: %s %d", d.Key(), d.Generation)
	}
	wantConf := map[string]string{
		"state.checkpoints.dir":                "file:///tmp/ckpt",
		"execution.checkpointing.num-retained": "3",
		"s3.endpoint":                          "http://spec:8333",
	}
	if diff := cmp.Diff(wantConf, d.FlinkConfiguration); diff != "" {
		t.Errorf("flinkConfiguration (-want +got):\n%s", diff)
	}
	if d.Job == nil || d.Job.State != StateRunning || *d.Job.Parallelism != 1 || d.Job.UpgradeMode != "savepoint" ||
		!slices.Equal(d.Job.Args, []string{"--rate", "50", "--keys", "8"}) {
		t.Errorf("job: %+v", d.Job)
	}
	if !strings.Contains(d.SpecJSON, `"jarURI":"local:///opt/lab/job.jar"`) {
		t.Errorf("SpecJSON: %s", d.SpecJSON)
	}
	session := mustParse(t, "apiVersion: flink.apache.org/v1beta1\nkind: FlinkDeployment\nmetadata: {name: s, namespace: ns}\nspec: {flinkConfiguration: {a: b}}")
	if session.Job != nil {
		t.Errorf("session cluster must have no job")
	}
}

func TestFingerprint(t *testing.T) {
	base := mustParse(t, baseManifest).Fingerprint()
	for _, tc := range []struct {
		name, from, to string
		restart        bool
	}{
		{"args", `"--rate", "50"`, `"--rate", "60"`, true},
		{"jar", "local:///opt/lab/job.jar", "local:///opt/lab/job2.jar", true},
		{"parallelism", "parallelism: 1", "parallelism: 2", true},
		{"flinkConfiguration", "num-retained: 3", "num-retained: 4", true},
		{"suspend", "upgradeMode: savepoint", "upgradeMode: savepoint\n    state: suspended", true},
		{"redeploy nonce", "upgradeMode: savepoint", "upgradeMode: savepoint\n    savepointRedeployNonce: 1", true},
		{"upgradeMode ignored", "upgradeMode: savepoint", "upgradeMode: last-state", false},
		{"initialSavepointPath ignored", "upgradeMode: savepoint", "upgradeMode: savepoint\n    initialSavepointPath: file:///x/chk-1", false},
		{"allowNonRestoredState ignored", "upgradeMode: savepoint", "upgradeMode: savepoint\n    allowNonRestoredState: true", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := strings.Replace(baseManifest, tc.from, tc.to, 1)
			if m == baseManifest {
				t.Fatal("replacement did not apply")
			}
			if got := mustParse(t, m).Fingerprint() != base; got != tc.restart {
				t.Errorf("restart = %v, want %v", got, tc.restart)
			}
		})
	}
}

func TestBuildLaunch(t *testing.T) {
	exists := func(p string) bool { return p == "/opt/lab/job.jar" || p == "/srv/flink/job.jar" }
	zero, two := 0, 2
	base := LaunchConfig{
		DefaultJar: "/default.jar", FileExists: exists, JavaOpts: []string{"-Xmx512m"},
		FlinkConf: map[string]string{"s3.endpoint": "http://runner:8333", "s3.access-key": "lab"},
	}
	type want struct {
		jar       string
		conf      map[string]string // subset that must match
		absent    []string          // keys that must not be set
		savepoint string
		jobID     string
		notes     int
	}
	for _, tc := range []struct {
		name     string
		cfg      LaunchConfig
		edit     func(string) string
		restore  string
		want     want
		wantArgs []string
	}{{
		name: "defaults, spec overrides runner conf, derived keys",
		cfg:  base,
		want: want{jar: "/opt/lab/job.jar", jobID: "fixedid", conf: map[string]string{
			"s3.endpoint": "http://spec:8333", "s3.access-key": "lab", "state.checkpoints.dir": "file:///tmp/ckpt",
			"rest.port": "24711", "rest.bind-port": "24711", "rest.address": "127.0.0.1", "rest.bind-address": "127.0.0.1",
			"parallelism.default": "1", "$internal.pipeline.job-id": "fixedid",
		}, absent: []string{KeySavepointPath, KeyTaskSlots, KeyScheduler, KeyIgnoreUnclaimed}},
		wantArgs: []string{"--rate", "50", "--keys", "8"},
	}, {
		name: "file:// jar",
		cfg:  base,
		edit: func(m string) string {
			return strings.Replace(m, "local:///opt/lab/job.jar", "file:///srv/flink/job.jar", 1)
		},
		want: want{jar: "/srv/flink/job.jar", jobID: "fixedid"},
	}, {
		name: "plain path jar",
		cfg:  base,
		edit: func(m string) string { return strings.Replace(m, "local:///opt/lab/job.jar", "/srv/flink/job.jar", 1) },
		want: want{jar: "/srv/flink/job.jar", jobID: "fixedid"},
	}, {
		name: "jar of the job image -> the lab's copy of that jar",
		cfg:  base,
		edit: func(m string) string {
			return strings.Replace(m, "local:///opt/lab/job.jar", "local:///opt/flink/usrlib/default.jar", 1)
		},
		want: want{jar: "/default.jar", jobID: "fixedid", notes: 1},
	}, {
		name: "no jarURI -> default jar",
		cfg:  base,
		edit: func(m string) string { return strings.Replace(m, "    jarURI: local:///opt/lab/job.jar\n", "", 1) },
		want: want{jar: "/default.jar", jobID: "fixedid"},
	}, {
		name: "restore path of the plan; allowNonRestoredState; user restore path stripped",
		cfg:  base,
		edit: func(m string) string {
			m = strings.Replace(m, "upgradeMode: savepoint", "upgradeMode: savepoint\n    allowNonRestoredState: true", 1)
			return strings.Replace(m, "num-retained: 3", "num-retained: 3\n    execution.state-recovery.path: file:///user", 1)
		},
		restore: "file:///ck/abc/chk-7",
		want: want{jar: "/opt/lab/job.jar", jobID: "fixedid", savepoint: "file:///ck/abc/chk-7", conf: map[string]string{
			KeySavepointPath: "file:///ck/abc/chk-7", KeyIgnoreUnclaimed: "true",
		}, absent: []string{KeyStateRecoveryPath}},
	}, {
		name: "no restore path: empty state, user restore path stripped",
		cfg:  base,
		edit: func(m string) string {
			m = strings.Replace(m, "upgradeMode: savepoint", "upgradeMode: stateless\n    initialSavepointPath: file:///ck/chk-1", 1)
			return strings.Replace(m, "num-retained: 3", "num-retained: 3\n    execution.savepoint.path: file:///user", 1)
		},
		want: want{jar: "/opt/lab/job.jar", jobID: "fixedid", absent: []string{KeySavepointPath}},
	}, {
		name: "0 task slots: no TaskManager + adaptive scheduler, wins over spec",
		cfg:  func() LaunchConfig { c := base; c.TaskSlots = &zero; return c }(),
		edit: func(m string) string {
			return strings.Replace(m, "num-retained: 3", "num-retained: 3\n    taskmanager.numberOfTaskSlots: 4", 1)
		},
		want: want{jar: "/opt/lab/job.jar", jobID: "fixedid", conf: map[string]string{KeyTaskSlots: "0", KeyScheduler: "adaptive"}},
	}, {
		name: "2 task slots",
		cfg:  func() LaunchConfig { c := base; c.TaskSlots = &two; return c }(),
		want: want{jar: "/opt/lab/job.jar", jobID: "fixedid", conf: map[string]string{KeyTaskSlots: "2"}, absent: []string{KeyScheduler}},
	}, {
		name: "user-pinned job id kept; rest.port from spec overridden",
		cfg:  base,
		edit: func(m string) string {
			return strings.Replace(m, "num-retained: 3", "num-retained: 3\n    $internal.pipeline.job-id: 00000000000000000000000000000abc\n    rest.port: \"8081\"", 1)
		},
		want: want{jar: "/opt/lab/job.jar", jobID: "00000000000000000000000000000abc", conf: map[string]string{
			KeyFixedJobID: "00000000000000000000000000000abc", KeyRestPort: "24711",
		}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			m := baseManifest
			if tc.edit != nil {
				m = tc.edit(m)
				if m == baseManifest {
					t.Fatal("edit did not apply")
				}
			}
			l, err := BuildLaunch(tc.cfg, mustParse(t, m), 24711, "fixedid", tc.restore)
			if err != nil {
				t.Fatal(err)
			}
			if l.Jar != tc.want.jar || l.JobID != tc.want.jobID || l.SavepointPath != tc.want.savepoint || len(l.Notes) != tc.want.notes {
				t.Errorf("jar=%s jobID=%s savepoint=%q notes=%q", l.Jar, l.JobID, l.SavepointPath, l.Notes)
			}
			for k, v := range tc.want.conf {
				if l.Conf[k] != v {
					t.Errorf("conf[%s] = %q, want %q", k, l.Conf[k], v)
				}
			}
			for _, k := range tc.want.absent {
				if v, ok := l.Conf[k]; ok {
					t.Errorf("conf[%s] = %q, want unset", k, v)
				}
			}
			// Command line: java, add-opens, JVM opts, -cp jar main, --conf k=v (one per key), job args last.
			argv := l.Argv
			if argv[0] != "java" || !slices.Equal(argv[1:1+len(JavaAddOpens)], JavaAddOpens) {
				t.Fatalf("argv head: %q", argv[:3])
			}
			rest := argv[1+len(JavaAddOpens):]
			if !slices.Equal(rest[:4], []string{"-Xmx512m", "-cp", tc.want.jar, DefaultMainClass}) {
				t.Errorf("argv: %q", rest[:4])
			}
			rest = rest[4:]
			for i := 0; i < 2*len(l.Conf); i += 2 {
				k, v, _ := strings.Cut(rest[i+1], "=")
				if rest[i] != "--conf" || l.Conf[k] != v {
					t.Errorf("argv conf %d: %q %q", i, rest[i], rest[i+1])
				}
			}
			if tc.wantArgs != nil && !slices.Equal(rest[2*len(l.Conf):], tc.wantArgs) {
				t.Errorf("job args: %q, want %q", rest[2*len(l.Conf):], tc.wantArgs)
			}
		})
	}
}

func TestBuildLaunchErrors(t *testing.T) {
	exists := func(p string) bool { return p == "/here/job.jar" }
	for _, tc := range []struct {
		name string
		cfg  LaunchConfig
		d    *Deployment
		want string // in the error
	}{
		{"session cluster", LaunchConfig{DefaultJar: "/d.jar"}, &Deployment{Name: "s"}, "session clusters are not supported"},
		{"no jar at all", LaunchConfig{}, &Deployment{Name: "x", Job: &JobSpec{}}, "no --default-jar"},
		{"remote jar", LaunchConfig{DefaultJar: "/d.jar"}, &Deployment{Name: "x", Job: &JobSpec{JarURI: "https://x/d.jar"}}, "does not fetch remote ones"},
		{"missing local jar of another name", LaunchConfig{DefaultJar: "/d.jar"}, &Deployment{Name: "x", Job: &JobSpec{JarURI: "local:///opt/flink/usrlib/other.jar"}}, "no such file on this host"},
		{"another entry class", LaunchConfig{DefaultJar: "/d.jar"}, &Deployment{Name: "x", Job: &JobSpec{JarURI: "/here/job.jar", EntryClass: "org.example.Other"}}, "entryClass org.example.Other is not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.FileExists = exists
			_, err := BuildLaunch(tc.cfg, tc.d, 1, "", "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if verr := tc.d.Validate(tc.cfg.DefaultJar, exists); verr == nil || verr.Error() != err.Error() {
				t.Errorf("Validate = %v, want the error BuildLaunch refuses with", verr)
			}
		})
	}
	l, err := BuildLaunch(LaunchConfig{DefaultJar: "/d.jar"}, &Deployment{Name: "x", Job: &JobSpec{}}, 1, "", "")
	if err != nil || len(l.JobID) != 32 || l.Conf[KeyFixedJobID] != l.JobID {
		t.Errorf("generated job id: %v %q", err, l.JobID)
	}
}

func TestLocalJarPath(t *testing.T) {
	for in, want := range map[string]string{
		"local:///opt/a.jar": "/opt/a.jar", "file:///opt/a.jar": "/opt/a.jar", "/opt/a.jar": "/opt/a.jar",
		"https://h/a.jar": "", "s3://b/a.jar": "", "a.jar": "", "local://rel.jar": "",
	} {
		got, ok := LocalJarPath(in)
		if (want != "") != ok || (ok && got != want) {
			t.Errorf("LocalJarPath(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// deployed returns u as the runner leaves it after deploying job id from
// restorePath: status.jobStatus and lastReconciledSpec (operator form, or the
// bare spec earlier runners wrote).
func deployed(t *testing.T, u *unstructured.Unstructured, id, restorePath string, bare bool) *unstructured.Unstructured {
	t.Helper()
	u = u.DeepCopy()
	d, err := ParseDeployment(u)
	if err != nil {
		t.Fatal(err)
	}
	last := d.ReconciledSpec(true)
	if bare {
		last = d.SpecJSON
	}
	u.Object["status"] = map[string]interface{}{
		"jobStatus":            map[string]interface{}{"jobId": id, "upgradeSavepointPath": restorePath},
		"reconciliationStatus": map[string]interface{}{"lastReconciledSpec": last},
	}
	return u
}

func TestPlan(t *testing.T) {
	const (
		id      = "0123456789abcdef0123456789abcdef"
		initial = "s3://ck/ns/job/ffffffffffffffffffffffffffffffff/chk-3"
	)
	newObj := func(upgradeMode string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
			"metadata": map[string]interface{}{"namespace": "ns", "name": "job", "generation": int64(1)},
			"spec": map[string]interface{}{
				"flinkConfiguration": map[string]interface{}{"state.checkpoints.dir": "s3://ck/ns/job"},
				"job": map[string]interface{}{"jarURI": "local:///job.jar", "parallelism": int64(1),
					"upgradeMode": upgradeMode, "initialSavepointPath": initial},
			},
		}}
	}
	change := func(u *unstructured.Unstructured, path ...string) *unstructured.Unstructured {
		u = u.DeepCopy()
		_ = unstructured.SetNestedField(u.Object, int64(7), append([]string{"spec"}, path...)...)
		return u
	}
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		want Plan
	}{
		{"first deployment, stateless: initialSavepointPath all the same (the operator reads it whatever the mode)",
			newObj(UpgradeStateless), Plan{Kind: PlanFirst, RestorePath: initial}},
		{"first deployment, last-state", newObj(UpgradeLastState), Plan{Kind: PlanFirst, RestorePath: initial}},
		{"same spec: recovery of the same job from its own state, never initialSavepointPath",
			deployed(t, newObj(UpgradeStateless), id, "", false), Plan{Kind: PlanRecover, JobID: id, ResumeJob: id}},
		{"same spec, bare lastReconciledSpec of an earlier runner: recovery",
			deployed(t, newObj(UpgradeSavepoint), id, "", true), Plan{Kind: PlanRecover, JobID: id, ResumeJob: id}},
		{"same spec, job started from a snapshot: recovery falls back to it (Flink's checkpoint store holds it)",
			deployed(t, newObj(UpgradeLastState), id, initial, false), Plan{Kind: PlanRecover, JobID: id, ResumeJob: id, RestorePath: initial}},
		{"only fields the operator's spec diff ignores changed (initialSavepointPath dropped, upgradeMode): still a recovery",
			func() *unstructured.Unstructured {
				u := deployed(t, newObj(UpgradeLastState), id, initial, false)
				unstructured.RemoveNestedField(u.Object, "spec", "job", "initialSavepointPath")
				_ = unstructured.SetNestedField(u.Object, UpgradeStateless, "spec", "job", "upgradeMode")
				return u
			}(), Plan{Kind: PlanRecover, JobID: id, ResumeJob: id, RestorePath: initial}},
		{"spec change, last-state: same job id, its own state",
			change(deployed(t, newObj(UpgradeLastState), id, "", false), "job", "parallelism"), Plan{Kind: PlanLastState, JobID: id, ResumeJob: id}},
		{"spec change, savepoint: a new job id from the old job's state",
			change(deployed(t, newObj(UpgradeSavepoint), id, "", false), "restartNonce"), Plan{Kind: PlanSavepoint, ResumeJob: id}},
		{"spec change, stateless: a new job id, empty state",
			change(deployed(t, newObj(UpgradeStateless), id, initial, false), "restartNonce"), Plan{Kind: PlanStateless}},
		{"savepointRedeployNonce changed: a new job id from initialSavepointPath",
			change(deployed(t, newObj(UpgradeLastState), id, "", false), "job", "savepointRedeployNonce"), Plan{Kind: PlanRedeploy, RestorePath: initial}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParseDeployment(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, d.Plan()); diff != "" {
				t.Errorf("Plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReconciledSpecIsTheOperators(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"metadata": map[string]interface{}{"namespace": "ns", "name": "job", "generation": int64(4)},
		"spec":     map[string]interface{}{"job": map[string]interface{}{"jarURI": "local:///job.jar", "parallelism": int64(2)}},
	}}
	d, err := ParseDeployment(u)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"resource_metadata":{"apiVersion":"flink.apache.org/v1beta1","firstDeployment":true,"metadata":{"generation":4}},"spec":{"job":{"jarURI":"local:///job.jar","parallelism":2}}}`
	if got := d.ReconciledSpec(true); got != want {
		t.Errorf("ReconciledSpec =\n%s\nwant\n%s", got, want)
	}
}

func TestLastStateFrom(t *testing.T) {
	dir := t.TempDir()
	const id = "0123456789abcdef0123456789abcdef"
	last := LastStateFrom(&checkpoint.Store{AllowFile: true})
	got, err := last(context.Background(), "file://"+dir, id)
	if err != nil || got != "" {
		t.Fatalf("no checkpoint yet: %q, %v; want \"\", nil", got, err)
	}
	for _, n := range []string{"chk-3", "chk-4", "chk-5"} {
		if err := os.MkdirAll(filepath.Join(dir, id, n), 0o755); err != nil {
			t.Fatal(err)
		}
		if n != "chk-5" { // chk-5 is in progress: no _metadata yet
			if err := os.WriteFile(filepath.Join(dir, id, n, checkpoint.MetadataFile), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err = last(context.Background(), "file://"+dir, id)
	if err != nil || !strings.HasSuffix(got, "/"+id+"/chk-4") {
		t.Fatalf("got %q, %v; want the completed chk-4", got, err)
	}
	if _, err := LastStateFrom(&checkpoint.Store{})(context.Background(), "file://"+dir, id); err == nil {
		t.Fatal("a store that cannot read the directory: want an error, not a fresh start")
	}
}
