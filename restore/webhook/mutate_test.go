package webhook

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
)

func TestMutate(t *testing.T) {
	cases := []struct {
		name      string
		cfg       func(*Config)
		op        admissionv1.Operation
		resource  string
		user      authenticationv1.UserInfo
		object    []byte
		oldObject []byte

		want     expect
		lookups  int // locator calls
		noLookup bool
	}{
		{
			name:   "no marker: unchanged",
			user:   karmadaSA,
			object: fd(map[string]string{"app": "wordcount"}, karmadaAnn(), conf(ckptDir), job()),

			want: expect{allowed: true}, noLookup: true,
		},
		{
			name:     "other resource: unchanged",
			resource: "flinksessionjobs",
			user:     karmadaSA,
			object:   fd(marker(), karmadaAnn(), conf(ckptDir), job()),

			want: expect{allowed: true}, noLookup: true,
		},
		{
			name:   "DELETE: unchanged",
			op:     admissionv1.Delete,
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),

			want: expect{allowed: true}, noLookup: true,
		},
		{
			name:   "trusted Karmada SA, checkpoint found: restored",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),

			want: expect{allowed: true, patch: restorePatch}, lookups: 1,
		},
		{
			name:   "restored, object with only Karmada's preserved-keys annotation",
			user:   karmadaSA,
			object: fd(marker(), map[string]string{workv1alpha2.FailoverPreservedKeysAnnotation: DefaultJobIDKey}, conf(ckptDir), job()),

			lookups: 1,
			want:    expect{allowed: true, patch: restorePatch},
		},
		{
			name:   "job id label the template carries itself (not in preserved-keys): ignored, the newest checkpoint under the directory restored",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(workv1alpha2.FailoverPreservedKeysAnnotation, ""), conf(ckptDir), job()),

			want: expect{allowed: true, patch: lineagePatch, warning: "is the resource template's own value, not listed in failover.karmada.io/preserved-keys: ignored"},
		},
		{
			name:   "marker without a job id (Karmada removed it once the failover completed; the object is re-created): newest checkpoint under the directory",
			user:   karmadaSA,
			object: fd(marker(DefaultJobIDKey, ""), map[string]string{workv1alpha2.FailoverFromAnnotation: "member1", workv1alpha2.FailoverTimeAnnotation: expiredTime}, conf(ckptDir), job()),

			want: expect{allowed: true, patch: lineagePatch, warning: "no job id carried: restoring the newest completed checkpoint"},
		},
		{
			name:   "state withheld: nothing restored, denied within the grace, no lookup",
			user:   karmadaSA,
			object: fd(marker(DefaultJobIDKey, ""), map[string]string{workv1alpha2.FailoverFromAnnotation: "member1", workv1alpha2.FailoverTimeAnnotation: failoverTime, workv1alpha2.FailoverStateWithheldAnnotation: "member1"}, conf(ckptDir), job()),

			want:     expect{code: 409, message: "Karmada withholds the old job's state because the job on member1 is not confirmed stopped"},
			noLookup: true,
		},
		{
			name:   "job id label listed among other preserved keys: restored",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(workv1alpha2.FailoverPreservedKeysAnnotation, "example.com/other,"+DefaultJobIDKey), conf(ckptDir), job()),

			want: expect{allowed: true, patch: restorePatch}, lookups: 1,
		},
		{
			name:   "preserved-keys names another key only: the template's job id label is ignored",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(workv1alpha2.FailoverPreservedKeysAnnotation, "example.com/other"), conf(ckptDir), job()),

			want: expect{allowed: true, patch: lineagePatch, warning: "is the resource template's own value"},
		},
		{
			name:   "forged job id label, nothing under the directory, after the grace: admitted without state, decision no-job-id, Warning event",
			user:   karmadaSA,
			object: fd(marker(), expiredAnn(workv1alpha2.FailoverPreservedKeysAnnotation, ""), conf("s3://flink-checkpoints/team-a/empty"), job()),

			want: expect{allowed: true, patch: `[{"op":"add","path":"/metadata/annotations/restore.lab.karmada.io~1decision","value":"` + DecisionNoJobID + `"}]`,
				warning: "Karmada could not extract the job id", events: 1},
		},
		{
			name: "job id carried as an annotation (not a valid label value case)",
			user: karmadaSA,
			object: fd(marker(DefaultJobIDKey, ""), karmadaAnn(DefaultJobIDKey, oldJob),
				conf(ckptDir), job()),

			want: expect{allowed: true, patch: restorePatch}, lookups: 1,
		},
		{
			name: "custom job id key",
			cfg:  func(c *Config) { c.JobIDKey = "resourcebinding.karmada.io/failover-jobid" },
			user: karmadaSA,
			object: fd(marker(DefaultJobIDKey, "", "resourcebinding.karmada.io/failover-jobid", oldJob),
				karmadaAnn(workv1alpha2.FailoverPreservedKeysAnnotation, "resourcebinding.karmada.io/failover-jobid"), conf(ckptDir), job()),

			want: expect{allowed: true, patch: restorePatch}, lookups: 1,
		},
		{
			name: "new config key and nested flinkConfiguration",
			user: karmadaSA,
			object: fd(marker(), karmadaAnn(), map[string]any{
				"execution":             map[string]any{"checkpointing": map[string]any{"dir": ckptDir + "/", "savepoint-dir": "s3://flink-checkpoints/team-a/sp"}},
				"state.checkpoints.dir": "s3://flink-checkpoints/team-a/ignored-deprecated-key",
			}, job()),

			want: expect{allowed: true, patch: restorePatch}, lookups: 1,
		},
		{
			name:   "s3a checkpoint dir under the s3 prefix template: restored",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf("s3a://flink-checkpoints/team-a/wordcount"), job()),

			// the locator is asked with the s3a URI (the fake has no result
			// for it), so the lookup happens instead of a 403
			want: expect{code: 404, message: "no completed checkpoint"}, lookups: 1,
		},
		{
			name:   "upgradeMode already savepoint: only the path",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job("upgradeMode", "savepoint")),

			want: expect{allowed: true, patch: patch(setChk12, restoredAnnOps)}, lookups: 1,
		},
		{
			name:   "auto upgradeMode without a savepoint dir: path only, warning",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir, "state.savepoints.dir", ""), job()),

			want: expect{allowed: true, warning: "upgradeMode left as last-state", patch: patch(setChk12, restoredAnnOps)}, lookups: 1,
		},
		{
			name:   "set-upgrade-mode=always without a savepoint dir",
			cfg:    func(c *Config) { c.UpgradeMode = UpgradeModeAlways },
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir, "state.savepoints.dir", ""), job()),

			want: expect{allowed: true, patch: restorePatch}, lookups: 1,
		},
		{
			name:   "untrusted user forging the marker: denied during the grace period",
			user:   alice,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),

			want: expect{code: 403, message: `honoured only from Karmada's identity (users system:serviceaccount:karmada-cluster:karmada-member2), not from "alice"`}, noLookup: true,
		},
		{
			name:   "untrusted user forging the marker with an old time: annotated, spec unchanged",
			user:   alice,
			object: fd(marker(), expiredAnn(), conf(ckptDir), job()),

			want: expect{allowed: true, warning: "honoured only from Karmada's identity", events: 1,
				patch: decisionPatch(DecisionIgnoredUntrusted, false)}, noLookup: true,
		},
		{
			name:   "cluster admin without a failover time: denied until Karmada sets it",
			user:   admin,
			object: fd(marker(), nil, conf(ckptDir), job()),

			want: expect{code: 403, message: "denied until Karmada sets failover.karmada.io/time"}, noLookup: true,
		},
		{
			name:   "another ServiceAccount of karmada-cluster is not Karmada",
			user:   otherClusterSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),

			want: expect{code: 403, message: "not from \"system:serviceaccount:karmada-cluster:backup-operator\""}, noLookup: true,
		},
		{
			name:   "impersonator SA is excluded from a trusted group",
			cfg:    func(c *Config) { c.Trust.Groups = []string{"system:serviceaccounts:karmada-cluster"} },
			user:   impersonatorSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),

			want: expect{code: 403, message: "honoured only from Karmada's identity"}, noLookup: true,
		},
		{
			name:   "trusted group (the old default) still works when configured",
			cfg:    func(c *Config) { c.Trust.Groups = []string{"system:serviceaccounts:karmada-cluster"} },
			user:   otherClusterSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),

			want: expect{allowed: true, patch: restorePatch}, lookups: 1,
		},
		{
			name:   "checkpoint dir of another namespace: denied",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf("s3://flink-checkpoints/team-b/payments"), job()),

			want: expect{code: 403, message: `outside the area allowed for namespace "team-a" ("s3://flink-checkpoints/team-a/")`}, noLookup: true,
		},
		{
			name:   "prefix look-alike namespace: denied",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf("s3://flink-checkpoints/team-ab/x"), job()),

			want: expect{code: 403, message: "outside the area allowed"}, noLookup: true,
		},
		{
			name:   "prefix template without a trailing slash: look-alike still denied",
			cfg:    func(c *Config) { c.PrefixTemplate = "s3://flink-checkpoints/{namespace}" },
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf("s3://flink-checkpoints/team-ab/x"), job()),

			want: expect{code: 403, message: `("s3://flink-checkpoints/team-a/")`}, noLookup: true,
		},
		{
			name:   "traversal out of the namespace: denied as invalid",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf("s3://flink-checkpoints/team-a/../team-b/payments"), job()),

			want: expect{code: 400, message: "path segment"}, noLookup: true,
		},
		{
			name:   "prefix template disabled: any dir is looked up",
			cfg:    func(c *Config) { c.PrefixTemplate = "" },
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf("s3://elsewhere/x"), job()),

			want: expect{code: 404, message: "no completed checkpoint"}, lookups: 1,
		},
		{
			name:   "unsupported scheme: denied",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf("hdfs://nn/flink/team-a"), job()),

			want: expect{code: 400, message: "unsupported scheme"}, noLookup: true,
		},
		{
			name:   "locator rejects the location: non-retriable deny",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf("s3://flink-checkpoints/team-a/invalid"), job()),

			want: expect{code: 400, message: "not configured"}, lookups: 1,
		},
		{
			name:   "invalid job id: denied",
			user:   karmadaSA,
			object: fd(marker(DefaultJobIDKey, "not-a-job-id"), karmadaAnn(), conf(ckptDir), job()),

			want: expect{code: 400, message: "not 32 hex characters"}, noLookup: true,
		},
		{
			name:   "session cluster (no spec.job): unchanged",
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), nil),

			want: expect{allowed: true, warning: "session cluster"}, noLookup: true,
		},
		{
			name:   "no checkpoint dir, --default-checkpoint-dir: restored from it",
			cfg:    func(c *Config) { c.DefaultCheckpointDir = "s3://flink-checkpoints/{namespace}/wordcount" },
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(""), job()),

			want: expect{allowed: true, patch: restorePatch}, lookups: 1,
		},
		{
			name:   "--default-checkpoint-dir does not override the object's own",
			cfg:    func(c *Config) { c.DefaultCheckpointDir = "s3://flink-checkpoints/{namespace}/other" },
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),

			want: expect{allowed: true, patch: restorePatch}, lookups: 1,
		},
		{
			name:   "--default-checkpoint-dir outside the prefix: denied",
			cfg:    func(c *Config) { c.DefaultCheckpointDir = "s3://shared-checkpoints/" },
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(""), job()),

			want: expect{code: 403, message: "outside the area allowed"}, noLookup: true,
		},
		{
			name:      "UPDATE, marker newly present, no path: restored",
			op:        admissionv1.Update,
			user:      karmadaSA,
			object:    fd(marker(), karmadaAnn(), conf(ckptDir), job()),
			oldObject: fd(map[string]string{"app": "wordcount"}, nil, conf(ckptDir), job()),

			want: expect{allowed: true, patch: restorePatch}, lookups: 1,
		},
		{
			name:      "UPDATE, marker newly present, path set: unchanged",
			op:        admissionv1.Update,
			user:      karmadaSA,
			object:    fd(marker(), karmadaAnn(), conf(ckptDir), job("initialSavepointPath", "s3://flink-checkpoints/team-a/sp/1")),
			oldObject: fd(map[string]string{"app": "wordcount"}, nil, conf(ckptDir), job()),

			want: expect{allowed: true}, noLookup: true,
		},
		{
			name:      "UPDATE, marker already present: unchanged",
			op:        admissionv1.Update,
			user:      karmadaSA,
			object:    fd(marker(), karmadaAnn(), conf(ckptDir), job()),
			oldObject: fd(marker(), karmadaAnn(), conf(ckptDir), job()),

			want: expect{allowed: true}, noLookup: true,
		},
		{
			name:      "UPDATE, marker already present without a job id (admitted after the grace): unchanged, no new event",
			op:        admissionv1.Update,
			user:      karmadaSA,
			object:    fd(marker(DefaultJobIDKey, ""), expiredAnn(), conf(ckptDir), job()),
			oldObject: fd(marker(DefaultJobIDKey, ""), expiredAnn(AnnotationDecision, DecisionNoJobID), conf(ckptDir), job()),

			want: expect{allowed: true}, noLookup: true,
		},
		{
			name:   "UPDATE from Karmada drops the restored path: carried forward",
			op:     admissionv1.Update,
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),
			oldObject: fd(marker(), map[string]string{AnnotationDecision: DecisionRestored, AnnotationCheckpoint: chk12, AnnotationFromJobID: oldJob,
				workv1alpha2.FailoverPreservedKeysAnnotation: DefaultJobIDKey}, conf(ckptDir), job("initialSavepointPath", chk12, "upgradeMode", "savepoint")),

			want: expect{allowed: true, patch: restorePatch}, noLookup: true,
		},
		{
			name:   "UPDATE by an untrusted user dropping the path: not carried",
			op:     admissionv1.Update,
			user:   alice,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),
			oldObject: fd(marker(), map[string]string{AnnotationDecision: DecisionRestored, AnnotationCheckpoint: chk12},
				conf(ckptDir), job("initialSavepointPath", chk12)),

			want: expect{allowed: true}, noLookup: true,
		},
		{
			name:   "UPDATE, forged restored annotation pointing elsewhere: not carried",
			op:     admissionv1.Update,
			user:   karmadaSA,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),
			oldObject: fd(marker(), map[string]string{AnnotationDecision: DecisionRestored, AnnotationCheckpoint: "s3://flink-checkpoints/team-b/x/chk-1"},
				conf(ckptDir), job("initialSavepointPath", "s3://flink-checkpoints/team-b/x/chk-1")),

			want: expect{allowed: true}, noLookup: true,
		},
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			loc := newFakeLocator()
			h, events := newTestHandler(t, loc, c.cfg)
			req := admissionRequest(c.op, c.user, c.object, c.oldObject)
			if c.resource != "" {
				req.Resource.Resource = c.resource
			}
			c.want.check(t, roundTrip(t, h, req), events.list())
			if c.noLookup && len(loc.calls)+len(loc.lineageCalls) != 0 {
				t.Errorf("locator called: %v %v", loc.calls, loc.lineageCalls)
			}
			if c.lookups > 0 && len(loc.calls) != c.lookups {
				t.Errorf("locator calls = %v, want %d", loc.calls, c.lookups)
			}
		})
	}
}

// TestMutateBadRequests checks that a request that is not an AdmissionReview is refused with
// the reason: a GET by HTTP status, a body that does not decode or carries no request by an
// AdmissionReview that denies it with code 400, as the API server expects answers.
func TestMutateBadRequests(t *testing.T) {
	h, _ := newTestHandler(t, newFakeLocator(), nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/mutate", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: HTTP %d, want %d", rec.Code, http.StatusMethodNotAllowed)
	}
	for _, c := range []struct{ body, contentType, want string }{
		{"{", "application/json", "unexpected end of JSON input"},
		{`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, "application/json", "AdmissionReview has no request"},
		{`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, "text/plain", "expected application/json"},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/mutate", strings.NewReader(c.body))
		req.Header.Set("Content-Type", c.contentType)
		h.ServeHTTP(rec, req)
		var review admissionv1.AdmissionReview
		if err := json.Unmarshal(rec.Body.Bytes(), &review); err != nil || review.Response == nil {
			t.Errorf("%q: HTTP %d %s: not an AdmissionReview (%v)", c.body, rec.Code, rec.Body.String(), err)
			continue
		}
		if r := review.Response; r.Allowed || r.Result == nil || r.Result.Code != http.StatusBadRequest || !strings.Contains(r.Result.Message, c.want) {
			t.Errorf("%q: response %+v, want denied with 400 and %q", c.body, r, c.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"bad on-missing", Config{Locator: newFakeLocator(), OnMissing: "maybe"}, "on-missing must be one of deny-until-grace, deny, start-fresh"},
		{"old failure-policy value", Config{Locator: newFakeLocator(), OnMissing: "ignore"}, "on-missing"},
		{"bad user-savepoint", Config{Locator: newFakeLocator(), UserSavepoint: "maybe"}, "user-savepoint must be one of override, keep"},
		{"bad upgrade mode", Config{Locator: newFakeLocator(), UpgradeMode: "maybe"}, "set-upgrade-mode"},
		{"bad prefix template", Config{Locator: newFakeLocator(), PrefixTemplate: "hdfs://x/{namespace}/"}, "allowed-prefix-template"},
		{"bad default dir", Config{Locator: newFakeLocator(), DefaultCheckpointDir: "s3://b/../{namespace}"}, "default-checkpoint-dir"},
		{"bad anonymous endpoint", Config{Locator: newFakeLocator(), Auth: CallerAuth{AllowAnonymous: []string{"healthz"}}}, "insecure-allow-anonymous"},
		{"missing locator", Config{}, "no checkpoint locator"},
	} {
		if _, err := NewHandler(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	cfg := Config{Locator: newFakeLocator(), PrefixTemplate: "s3://b/{namespace}"}
	if err := cfg.Validate(); err != nil || cfg.PrefixTemplate != "s3://b/{namespace}/" ||
		cfg.OnMissing != OnMissingDenyUntilGrace || cfg.MissingGrace != DefaultMissingGrace || cfg.UserSavepoint != UserSavepointOverride {
		t.Errorf("defaults: %+v, %v", cfg, err)
	}
}
