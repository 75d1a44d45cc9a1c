package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/karmada-failover/lab/restore/checkpoint"
)

const (
	oldJob  = "44cc5573945d1d4925732d915c70b9ac"
	ckptDir = "s3://flink-checkpoints/team-a/wordcount"
	chk12   = ckptDir + "/" + oldJob + "/chk-12"
)

// fakeLocator answers from a map "dir|jobId" -> checkpoint or error.
type fakeLocator struct {
	mu      sync.Mutex
	results map[string]checkpoint.Checkpoint
	errs    map[string]error
	calls   []string
}

func (f *fakeLocator) LatestCompleted(_ context.Context, dir, jobID string) (checkpoint.Checkpoint, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := dir + "|" + jobID
	f.calls = append(f.calls, k)
	if err, ok := f.errs[k]; ok {
		return checkpoint.Checkpoint{}, err
	}
	if cp, ok := f.results[k]; ok {
		return cp, nil
	}
	return checkpoint.Checkpoint{}, fmt.Errorf("%w under %s", checkpoint.ErrNotFound, dir)
}

func newFakeLocator() *fakeLocator {
	return &fakeLocator{
		results: map[string]checkpoint.Checkpoint{
			ckptDir + "|" + oldJob: {ID: 12, SavepointPath: chk12},
		},
		errs: map[string]error{
			"s3://flink-checkpoints/team-a/broken|" + oldJob:  errors.New("operation error S3: ListObjectsV2, https response error StatusCode: 500"),
			"s3://flink-checkpoints/team-a/invalid|" + oldJob: fmt.Errorf("%w: S3 locations are not configured", checkpoint.ErrInvalid),
		},
	}
}

var (
	karmadaSA = authenticationv1.UserInfo{
		Username: "system:serviceaccount:karmada-cluster:karmada-member2",
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:karmada-cluster", "system:authenticated"},
	}
	impersonatorSA = authenticationv1.UserInfo{
		Username: "system:serviceaccount:karmada-cluster:karmada-impersonator",
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:karmada-cluster", "system:authenticated"},
	}
	alice = authenticationv1.UserInfo{Username: "alice", Groups: []string{"team-a", "system:authenticated"}}
	admin = authenticationv1.UserInfo{Username: "kubernetes-admin", Groups: []string{"kubeadm:cluster-admins", "system:authenticated"}}
)

// fd builds a FlinkDeployment. labels/annotations nil = field absent.
// job: nil = no spec.job.
func fd(labels, annotations map[string]string, conf map[string]any, job map[string]any) []byte {
	meta := map[string]any{"name": "wordcount", "namespace": "team-a"}
	if labels != nil {
		meta["labels"] = labels
	}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	spec := map[string]any{
		"image":              "flink:1.20",
		"flinkVersion":       "v1_20",
		"flinkConfiguration": conf,
		"serviceAccount":     "flink",
	}
	if job != nil {
		spec["job"] = job
	}
	b, err := json.Marshal(map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment", "metadata": meta, "spec": spec,
	})
	if err != nil {
		panic(err)
	}
	return b
}

func marker(extra ...string) map[string]string {
	m := map[string]string{LabelFailoverReason: "ClusterFailure", DefaultJobIDKey: oldJob, "app": "wordcount"}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == "" {
			delete(m, extra[i])
		} else {
			m[extra[i]] = extra[i+1]
		}
	}
	return m
}

func karmadaAnn() map[string]string {
	return map[string]string{AnnotationFrom: "member1", AnnotationTime: "2026-12-01T10:00:00Z"}
}

func conf(dir string, extra ...string) map[string]any {
	m := map[string]any{"taskmanager.numberOfTaskSlots": "2", "state.savepoints.dir": "s3://flink-checkpoints/team-a/wordcount-sp"}
	if dir != "" {
		m["state.checkpoints.dir"] = dir
	}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == "" {
			delete(m, extra[i])
		} else {
			m[extra[i]] = extra[i+1]
		}
	}
	return m
}

func job(extra ...string) map[string]any {
	m := map[string]any{"jarURI": "local:///opt/flink/usrlib/job.jar", "upgradeMode": "last-state", "state": "running", "allowNonRestoredState": true}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == "" {
			delete(m, extra[i])
		} else {
			m[extra[i]] = extra[i+1]
		}
	}
	return m
}

const restoredAnnOps = `{"op":"add","path":"/metadata/annotations/restore.lab.karmada.io~1checkpoint","value":"` + chk12 + `"},` +
	`{"op":"add","path":"/metadata/annotations/restore.lab.karmada.io~1decision","value":"restored"},` +
	`{"op":"add","path":"/metadata/annotations/restore.lab.karmada.io~1from-job-id","value":"` + oldJob + `"}`

const restorePatch = `[{"op":"add","path":"/spec/job/initialSavepointPath","value":"` + chk12 + `"},` +
	`{"op":"add","path":"/spec/job/upgradeMode","value":"savepoint"},` + restoredAnnOps + `]`

func TestMutate(t *testing.T) {
	type tc struct {
		name      string
		cfg       func(*Config)
		op        admissionv1.Operation
		resource  string
		user      authenticationv1.UserInfo
		object    []byte
		oldObject []byte

		wantAllowed  bool
		wantCode     int32
		wantMessage  string // substring of the deny message
		wantPatch    string // exact JSON patch; "" = no patch
		wantWarning  string // substring of one warning; "" = no warnings
		wantLookups  int
		wantNoLookup bool
	}
	cases := []tc{
		{
			name:   "no marker: unchanged",
			user:   karmadaSA,
			object: fd(map[string]string{"app": "wordcount"}, karmadaAnn(), conf(ckptDir), job()),

			wantAllowed: true, wantNoLookup: true,
		},
		{
			name:     "other resource: unchanged",
			resource: "flinksessionjobs",
			user:     karmadaSA,
			object:   fd(marker(), karmadaAnn(), conf(ckptDir), job()),

			wantAllowed: true, wantNoLookup: true,
		},
		{
			name:   "DELETE: unchanged",
			op:     admissionv1.Delete,
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),

			wantAllowed: true, wantNoLookup: true,
		},
		{
			name:   "trusted Karmada SA, checkpoint found: restored",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),

			wantAllowed: true, wantPatch: restorePatch, wantLookups: 1,
		},
		{
			name:   "restored, object without annotations: annotations map created",
			user:   karmadaSA,
			object: fd(marker(), nil, conf(ckptDir), job()),

			wantAllowed: true, wantLookups: 1,
			wantPatch: `[{"op":"add","path":"/spec/job/initialSavepointPath","value":"` + chk12 + `"},` +
				`{"op":"add","path":"/spec/job/upgradeMode","value":"savepoint"},` +
				`{"op":"add","path":"/metadata/annotations","value":{"restore.lab.karmada.io/checkpoint":"` + chk12 + `","restore.lab.karmada.io/decision":"restored","restore.lab.karmada.io/from-job-id":"` + oldJob + `"}}]`,
		},
		{
			name: "job id carried as an annotation (not a valid label value case)",
			user: karmadaSA,
			object: fd(marker(DefaultJobIDKey, ""), map[string]string{AnnotationFrom: "member1", DefaultJobIDKey: oldJob},
				conf(ckptDir), job()),

			wantAllowed: true, wantPatch: restorePatch, wantLookups: 1,
		},
		{
			name:   "custom job id key",
			cfg:    func(c *Config) { c.JobIDKey = "resourcebinding.karmada.io/failover-jobid" },
			user:   karmadaSA,
			object: fd(marker(DefaultJobIDKey, "", "resourcebinding.karmada.io/failover-jobid", oldJob), karmadaAnn(), conf(ckptDir), job()),

			wantAllowed: true, wantPatch: restorePatch, wantLookups: 1,
		},
		{
			name: "new config key and nested flinkConfiguration",
			user: karmadaSA,
			object: fd(marker(), karmadaAnn(), map[string]any{
				"execution":             map[string]any{"checkpointing": map[string]any{"dir": ckptDir + "/", "savepoint-dir": "s3://flink-checkpoints/team-a/sp"}},
				"state.checkpoints.dir": "s3://flink-checkpoints/team-a/ignored-deprecated-key",
			}, job()),

			wantAllowed: true, wantPatch: restorePatch, wantLookups: 1,
		},
		{
			name:   "upgradeMode already savepoint: only the path",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job("upgradeMode", "savepoint")),

			wantAllowed: true, wantLookups: 1,
			wantPatch: `[{"op":"add","path":"/spec/job/initialSavepointPath","value":"` + chk12 + `"},` + restoredAnnOps + `]`,
		},
		{
			name:   "auto upgradeMode without a savepoint dir: path only, warning",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir, "state.savepoints.dir", ""), job()),

			wantAllowed: true, wantLookups: 1, wantWarning: "upgradeMode left as last-state",
			wantPatch: `[{"op":"add","path":"/spec/job/initialSavepointPath","value":"` + chk12 + `"},` + restoredAnnOps + `]`,
		},
		{
			name:   "set-upgrade-mode=always without a savepoint dir",
			cfg:    func(c *Config) { c.UpgradeMode = UpgradeModeAlways },
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir, "state.savepoints.dir", ""), job()),

			wantAllowed: true, wantLookups: 1, wantPatch: restorePatch,
		},
		{
			name:   "untrusted user forging the marker: annotated, spec unchanged",
			user:   alice,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),

			wantAllowed: true, wantNoLookup: true, wantWarning: "only honoured from Karmada's identity",
			wantPatch: `[{"op":"add","path":"/metadata/annotations/restore.lab.karmada.io~1decision","value":"ignored-untrusted-marker"}]`,
		},
		{
			name:   "cluster admin is not Karmada either",
			user:   admin,
			object: fd(marker(), nil, conf(ckptDir), job()),

			wantAllowed: true, wantNoLookup: true, wantWarning: "not from \"kubernetes-admin\"",
			wantPatch: `[{"op":"add","path":"/metadata/annotations","value":{"restore.lab.karmada.io/decision":"ignored-untrusted-marker"}}]`,
		},
		{
			name:   "impersonator SA is excluded from the trusted group",
			user:   impersonatorSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),

			wantAllowed: true, wantNoLookup: true, wantWarning: "only honoured",
			wantPatch: `[{"op":"add","path":"/metadata/annotations/restore.lab.karmada.io~1decision","value":"ignored-untrusted-marker"}]`,
		},
		{
			name: "explicitly trusted username (Pull mode karmada-agent)",
			cfg: func(c *Config) {
				c.Trust = Trust{Usernames: []string{"system:serviceaccount:karmada-system:karmada-agent"}}
			},
			user:   authenticationv1.UserInfo{Username: "system:serviceaccount:karmada-system:karmada-agent", Groups: []string{"system:serviceaccounts"}},
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),

			wantAllowed: true, wantPatch: restorePatch, wantLookups: 1,
		},
		{
			name:   "checkpoint dir of another namespace: denied",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf("s3://flink-checkpoints/team-b/payments"), job()),

			wantCode: 403, wantNoLookup: true, wantMessage: `outside the area allowed for namespace "team-a" ("s3://flink-checkpoints/team-a/")`,
		},
		{
			name:   "prefix look-alike namespace: denied",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf("s3://flink-checkpoints/team-ab/x"), job()),

			wantCode: 403, wantNoLookup: true, wantMessage: "outside the area allowed",
		},
		{
			name:   "traversal out of the namespace: denied as invalid",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf("s3://flink-checkpoints/team-a/../team-b/payments"), job()),

			wantCode: 400, wantNoLookup: true, wantMessage: "path segment",
		},
		{
			name:   "prefix template disabled: any dir",
			cfg:    func(c *Config) { c.PrefixTemplate = "" },
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf("s3://elsewhere/x"), job()),

			wantAllowed: true, wantLookups: 1, wantWarning: "no completed checkpoint",
			wantPatch: `[{"op":"add","path":"/metadata/annotations/restore.lab.karmada.io~1decision","value":"no-checkpoint-found"},` +
				`{"op":"add","path":"/metadata/annotations/restore.lab.karmada.io~1from-job-id","value":"` + oldJob + `"}]`,
		},
		{
			name:   "unsupported scheme: denied",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf("hdfs://nn/flink/team-a"), job()),

			wantCode: 400, wantNoLookup: true, wantMessage: "unsupported scheme",
		},
		{
			name:   "no checkpoint, start-fresh: annotated with a warning",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf("s3://flink-checkpoints/team-a/empty"), job()),

			wantAllowed: true, wantLookups: 1, wantWarning: "no completed checkpoint (chk-N/_metadata) of job " + oldJob,
			wantPatch: `[{"op":"add","path":"/metadata/annotations/restore.lab.karmada.io~1decision","value":"no-checkpoint-found"},` +
				`{"op":"add","path":"/metadata/annotations/restore.lab.karmada.io~1from-job-id","value":"` + oldJob + `"}]`,
		},
		{
			name:   "no checkpoint, on-missing=deny",
			cfg:    func(c *Config) { c.OnMissing = OnMissingDeny },
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf("s3://flink-checkpoints/team-a/empty"), job()),

			wantCode: 404, wantLookups: 1, wantMessage: "on-missing=deny",
		},
		{
			name:   "no checkpoint dir configured: start fresh",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(""), job("upgradeMode", "stateless")),

			wantAllowed: true, wantNoLookup: true, wantWarning: "sets no checkpoint directory",
			wantPatch: `[{"op":"add","path":"/metadata/annotations/restore.lab.karmada.io~1decision","value":"no-checkpoint-found"},` +
				`{"op":"add","path":"/metadata/annotations/restore.lab.karmada.io~1from-job-id","value":"` + oldJob + `"}]`,
		},
		{
			name:   "create-subdir false: cannot tell jobs apart",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir, "execution.checkpointing.create-subdir", "false"), job()),

			wantAllowed: true, wantNoLookup: true, wantWarning: "create-subdir is false",
			wantPatch: `[{"op":"add","path":"/metadata/annotations/restore.lab.karmada.io~1decision","value":"no-checkpoint-found"},` +
				`{"op":"add","path":"/metadata/annotations/restore.lab.karmada.io~1from-job-id","value":"` + oldJob + `"}]`,
		},
		{
			name:   "user set initialSavepointPath: kept",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job("initialSavepointPath", "s3://flink-checkpoints/team-a/sp/savepoint-1")),

			wantAllowed: true, wantNoLookup: true,
			wantPatch: `[{"op":"add","path":"/metadata/annotations/restore.lab.karmada.io~1decision","value":"kept-user-savepoint"},` +
				`{"op":"add","path":"/metadata/annotations/restore.lab.karmada.io~1from-job-id","value":"` + oldJob + `"}]`,
		},
		{
			name:   "store error, failure-policy fail: retriable deny",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf("s3://flink-checkpoints/team-a/broken"), job()),

			wantCode: 503, wantLookups: 1, wantMessage: "retry later",
		},
		{
			name:   "store error, failure-policy ignore: start fresh",
			cfg:    func(c *Config) { c.FailurePolicy = FailurePolicyIgnore },
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf("s3://flink-checkpoints/team-a/broken"), job()),

			wantAllowed: true, wantLookups: 1, wantWarning: "failure-policy=ignore",
			wantPatch: `[{"op":"add","path":"/metadata/annotations/restore.lab.karmada.io~1decision","value":"lookup-failed-ignored"},` +
				`{"op":"add","path":"/metadata/annotations/restore.lab.karmada.io~1from-job-id","value":"` + oldJob + `"}]`,
		},
		{
			name:   "locator rejects the location: non-retriable deny",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf("s3://flink-checkpoints/team-a/invalid"), job()),

			wantCode: 400, wantLookups: 1, wantMessage: "not configured",
		},
		{
			name:   "invalid job id: denied",
			user:   karmadaSA,
			object: fd(marker(DefaultJobIDKey, "not-a-job-id"), karmadaAnn(), conf(ckptDir), job()),

			wantCode: 400, wantNoLookup: true, wantMessage: "not 32 hex characters",
		},
		{
			name:   "reason without job id: unchanged with a warning",
			user:   karmadaSA,
			object: fd(marker(DefaultJobIDKey, ""), karmadaAnn(), conf(ckptDir), job()),

			wantAllowed: true, wantNoLookup: true, wantWarning: "starting without state",
		},
		{
			name:   "session cluster (no spec.job): unchanged",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), nil),

			wantAllowed: true, wantNoLookup: true, wantWarning: "session cluster",
		},
		{
			name:      "UPDATE, marker newly present, no path: restored",
			op:        admissionv1.Update,
			user:      karmadaSA,
			object:    fd(marker(), karmadaAnn(), conf(ckptDir), job()),
			oldObject: fd(map[string]string{"app": "wordcount"}, nil, conf(ckptDir), job()),

			wantAllowed: true, wantLookups: 1, wantPatch: restorePatch,
		},
		{
			name:      "UPDATE, marker newly present, path set: unchanged",
			op:        admissionv1.Update,
			user:      karmadaSA,
			object:    fd(marker(), karmadaAnn(), conf(ckptDir), job("initialSavepointPath", "s3://flink-checkpoints/team-a/sp/1")),
			oldObject: fd(map[string]string{"app": "wordcount"}, nil, conf(ckptDir), job()),

			wantAllowed: true, wantNoLookup: true,
		},
		{
			name:      "UPDATE, marker already present: unchanged",
			op:        admissionv1.Update,
			user:      karmadaSA,
			object:    fd(marker(), karmadaAnn(), conf(ckptDir), job()),
			oldObject: fd(marker(), karmadaAnn(), conf(ckptDir), job()),

			wantAllowed: true, wantNoLookup: true,
		},
		{
			name:   "UPDATE from Karmada drops the restored path: carried forward",
			op:     admissionv1.Update,
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),
			oldObject: fd(marker(), map[string]string{AnnotationDecision: DecisionRestored, AnnotationCheckpoint: chk12, AnnotationFromJobID: oldJob},
				conf(ckptDir), job("initialSavepointPath", chk12, "upgradeMode", "savepoint")),

			wantAllowed: true, wantNoLookup: true, wantPatch: restorePatch,
		},
		{
			name:   "UPDATE by an untrusted user dropping the path: not carried",
			op:     admissionv1.Update,
			user:   alice,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),
			oldObject: fd(marker(), map[string]string{AnnotationDecision: DecisionRestored, AnnotationCheckpoint: chk12},
				conf(ckptDir), job("initialSavepointPath", chk12)),

			wantAllowed: true, wantNoLookup: true,
		},
		{
			name:   "UPDATE, forged restored annotation pointing elsewhere: not carried",
			op:     admissionv1.Update,
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),
			oldObject: fd(marker(), map[string]string{AnnotationDecision: DecisionRestored, AnnotationCheckpoint: "s3://flink-checkpoints/team-b/x/chk-1"},
				conf(ckptDir), job("initialSavepointPath", "s3://flink-checkpoints/team-b/x/chk-1")),

			wantAllowed: true, wantNoLookup: true,
		},
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			loc := newFakeLocator()
			cfg := Config{
				Trust: Trust{
					Groups:            []string{DefaultTrustedGroup},
					ExcludedUsernames: []string{DefaultUntrustedUsername},
				},
				PrefixTemplate: DefaultPrefixTemplate,
				Locator:        loc,
			}
			if c.cfg != nil {
				c.cfg(&cfg)
			}
			h, err := NewHandler(cfg)
			if err != nil {
				t.Fatal(err)
			}
			op, resource := c.op, c.resource
			if op == "" {
				op = admissionv1.Create
			}
			if resource == "" {
				resource = "flinkdeployments"
			}
			req := &admissionv1.AdmissionRequest{
				UID:       "6f1c6a1e-0000-4000-8000-000000000001",
				Kind:      metav1.GroupVersionKind{Group: "flink.apache.org", Version: "v1beta1", Kind: "FlinkDeployment"},
				Resource:  metav1.GroupVersionResource{Group: "flink.apache.org", Version: "v1beta1", Resource: resource},
				Name:      "wordcount",
				Namespace: "team-a",
				Operation: op,
				UserInfo:  c.user,
				Object:    runtime.RawExtension{Raw: c.object},
			}
			if c.oldObject != nil {
				req.OldObject = runtime.RawExtension{Raw: c.oldObject}
			}
			resp := roundTrip(t, h, req)

			if resp.UID != req.UID {
				t.Errorf("UID = %q, want %q", resp.UID, req.UID)
			}
			if resp.Allowed != c.wantAllowed {
				t.Fatalf("allowed = %v, want %v (result %+v)", resp.Allowed, c.wantAllowed, resp.Result)
			}
			if !c.wantAllowed {
				if resp.Result == nil || resp.Result.Code != c.wantCode || !strings.Contains(resp.Result.Message, c.wantMessage) {
					t.Errorf("result = %+v, want code %d and message containing %q", resp.Result, c.wantCode, c.wantMessage)
				}
				if resp.Patch != nil {
					t.Errorf("denied response carries a patch: %s", resp.Patch)
				}
			}
			if got := string(resp.Patch); got != c.wantPatch {
				t.Errorf("patch =\n  %s\nwant\n  %s", got, c.wantPatch)
			}
			if c.wantPatch != "" && (resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch) {
				t.Errorf("patchType = %v, want JSONPatch", resp.PatchType)
			}
			if c.wantWarning == "" && len(resp.Warnings) > 0 {
				t.Errorf("unexpected warnings %q", resp.Warnings)
			}
			if c.wantWarning != "" && !strings.Contains(strings.Join(resp.Warnings, "\n"), c.wantWarning) {
				t.Errorf("warnings %q do not contain %q", resp.Warnings, c.wantWarning)
			}
			if c.wantNoLookup && len(loc.calls) != 0 {
				t.Errorf("locator called: %v", loc.calls)
			}
			if c.wantLookups > 0 && len(loc.calls) != c.wantLookups {
				t.Errorf("locator calls = %v, want %d", loc.calls, c.wantLookups)
			}
		})
	}
}

// roundTrip sends the request as an AdmissionReview through the HTTP handler.
func roundTrip(t *testing.T, h http.Handler, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	t.Helper()
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  req,
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mutate", bytes.NewReader(body)))
	if rec.Code != http.StatusOK {
		t.Fatalf("HTTP %d: %s", rec.Code, rec.Body.String())
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &review); err != nil {
		t.Fatal(err)
	}
	if review.APIVersion != "admission.k8s.io/v1" || review.Kind != "AdmissionReview" || review.Response == nil {
		t.Fatalf("bad review: %s", rec.Body.String())
	}
	return review.Response
}

func TestMutateBadRequests(t *testing.T) {
	h, err := NewHandler(Config{Locator: newFakeLocator()})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, body string
		want         int
	}{
		{http.MethodGet, "", http.StatusMethodNotAllowed},
		{http.MethodPost, "{", http.StatusBadRequest},
		{http.MethodPost, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, http.StatusBadRequest},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, "/mutate", strings.NewReader(c.body)))
		if rec.Code != c.want {
			t.Errorf("%s %q: HTTP %d, want %d", c.method, c.body, rec.Code, c.want)
		}
	}
	if _, err := NewHandler(Config{Locator: newFakeLocator(), OnMissing: "maybe"}); err == nil {
		t.Error("bad on-missing accepted")
	}
	if _, err := NewHandler(Config{Locator: newFakeLocator(), FailurePolicy: "maybe"}); err == nil {
		t.Error("bad failure-policy accepted")
	}
	if _, err := NewHandler(Config{}); err == nil {
		t.Error("missing locator accepted")
	}
}
