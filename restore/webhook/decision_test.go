package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
	"github.com/karmada-failover/lab/restore/checkpoint"
)

// TestDecide drives the restore decision as a pure function: the request, the
// time, the policy and the store's answers in, the decision (or the next store
// question) out. No store, server or clock is involved.
func TestDecide(t *testing.T) {
	const (
		spDir    = "s3://flink-checkpoints/team-a/wordcount-sp"
		laterJob = "0c5b1b4d8e7f6a5b4c3d2e1f0a9b8c7d"
	)
	chk20 := ckptDir + "/" + laterJob + "/chk-20"
	latest := storeQuery{kind: queryLatest, dir: ckptDir, job: oldJob}
	lineage := storeQuery{kind: queryLineage, dir: ckptDir}
	savepointsOf := func(job string) storeQuery { return storeQuery{kind: querySavepoint, dir: spDir, job: job} }
	noSavepoint := storeAnswer{err: fmt.Errorf("%w: no savepoint", checkpoint.ErrNotFound)}
	at12 := storeAnswer{cp: checkpoint.Checkpoint{ID: 12, JobID: oldJob, SavepointPath: chk12, Completed: chk12Written}}

	cases := []struct {
		name   string
		user   authenticationv1.UserInfo
		object []byte
		store  map[storeQuery]storeAnswer
		cfg    func(*Config)

		need        *storeQuery
		savepoint   string
		decision    string
		annotations map[string]string
		denied      int32
		warning     string
		events      int
	}{
		{
			name: "a marked create asks for the carried job's latest checkpoint first",
			user: karmadaSA, object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),
			need: &latest,
		},
		{
			name: "then for the lineage's newest",
			user: karmadaSA, object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),
			store: map[storeQuery]storeAnswer{latest: at12},
			need:  &lineage,
		},
		{
			name: "then for the carried job's savepoints",
			user: karmadaSA, object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),
			store: map[storeQuery]storeAnswer{latest: at12, lineage: at12},
			need:  ptr(savepointsOf(oldJob)),
		},
		{
			name: "with every answer: restored from the carried job's latest checkpoint",
			user: karmadaSA, object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),
			store:     map[storeQuery]storeAnswer{latest: at12, lineage: at12, savepointsOf(oldJob): noSavepoint},
			savepoint: chk12, decision: DecisionRestored,
			annotations: map[string]string{AnnotationDecision: DecisionRestored, AnnotationCheckpoint: chk12, AnnotationFromJobID: oldJob},
		},
		{
			// Karmada puts a reason that is not a valid label value (an eviction reason with ',' or ':')
			// in an annotation with the label's key.
			name: "a reason carried as an annotation marks the object too",
			user: karmadaSA, object: fd(marker(workv1alpha2.FailoverReasonLabel, ""), karmadaAnn(workv1alpha2.FailoverReasonLabel, "Quota:Exceeded"), conf(ckptDir), job()),
			store:     map[storeQuery]storeAnswer{latest: at12, lineage: at12, savepointsOf(oldJob): noSavepoint},
			savepoint: chk12, decision: DecisionRestored,
			annotations: map[string]string{AnnotationDecision: DecisionRestored, AnnotationCheckpoint: chk12, AnnotationFromJobID: oldJob},
		},
		{
			name: "a later job of the lineage checkpointed since: its checkpoint, with both jobs' savepoints asked",
			user: karmadaSA, object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),
			store: map[storeQuery]storeAnswer{latest: at12, savepointsOf(oldJob): noSavepoint, savepointsOf(laterJob): noSavepoint,
				lineage: {cp: checkpoint.Checkpoint{ID: 20, JobID: laterJob, SavepointPath: chk20, Completed: chk12Written.Add(time.Minute)}}},
			savepoint: chk20, decision: DecisionRestored,
			annotations: map[string]string{AnnotationDecision: DecisionRestored, AnnotationCheckpoint: chk20, AnnotationFromJobID: oldJob,
				AnnotationRestoredJobID: laterJob},
		},
		{
			name: "an untrusted requester: nothing asked, denied during the grace period",
			user: alice, object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),
			denied: http.StatusForbidden,
		},
		{
			name: "an untrusted requester after the grace period: admitted without state, a Warning Event",
			user: alice, object: fd(marker(), expiredAnn(), conf(ckptDir), job()),
			decision: DecisionIgnoredUntrusted, warning: "honoured only from Karmada's identity", events: 1,
			annotations: map[string]string{AnnotationDecision: DecisionIgnoredUntrusted},
		},
		{
			name: "the store fails: lookup failed, denied during the grace period",
			user: karmadaSA, object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),
			store:  map[storeQuery]storeAnswer{latest: {err: errors.New("S3: 500")}},
			denied: http.StatusServiceUnavailable,
		},
		{
			name: "on-missing=start-fresh: no checkpoint admits the job without state",
			user: karmadaSA, object: fd(marker(), karmadaAnn(), conf(ckptDir), job()),
			cfg:      func(c *Config) { c.OnMissing = OnMissingStartFresh },
			store:    map[storeQuery]storeAnswer{latest: noSavepoint, lineage: noSavepoint, savepointsOf(oldJob): noSavepoint},
			decision: DecisionNoCheckpoint, warning: "no completed checkpoint", events: 1,
			annotations: map[string]string{AnnotationDecision: DecisionNoCheckpoint, AnnotationFromJobID: oldJob},
		},
		{
			name: "no marker: unchanged, nothing asked",
			user: karmadaSA, object: fd(map[string]string{"app": "wordcount"}, karmadaAnn(), conf(ckptDir), job()),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, _ := newTestHandler(t, newFakeLocator(), c.cfg)
			in := &decisionInput{op: admissionv1.Create, namespace: "team-a", user: c.user, obj: &flinkDeployment{}, now: testNow, store: c.store}
			if err := json.Unmarshal(c.object, in.obj); err != nil {
				t.Fatal(err)
			}
			d := h.cfg.decide(in)
			if !reflect.DeepEqual(d, h.cfg.decide(in)) {
				t.Fatal("the same inputs gave two decisions")
			}
			if !reflect.DeepEqual(d.need, c.need) {
				t.Fatalf("asks %+v, want %+v", d.need, c.need)
			}
			if d.need != nil {
				return
			}
			if d.savepoint != c.savepoint || d.annotations[AnnotationDecision] != c.decision {
				t.Errorf("savepoint %q decision %q, want %q %q", d.savepoint, d.annotations[AnnotationDecision], c.savepoint, c.decision)
			}
			if c.annotations != nil && !reflect.DeepEqual(d.annotations, c.annotations) {
				t.Errorf("annotations %v, want %v", d.annotations, c.annotations)
			}
			switch {
			case c.denied == 0 && d.denied != nil:
				t.Errorf("denied: %s", d.denied.Message)
			case c.denied != 0 && (d.denied == nil || d.denied.Code != c.denied):
				t.Errorf("denial %+v, want code %d", d.denied, c.denied)
			}
			if c.warning != "" && !strings.Contains(strings.Join(d.warnings, "\n"), c.warning) {
				t.Errorf("warnings %q lack %q", d.warnings, c.warning)
			}
			if len(d.events) != c.events {
				t.Errorf("events %v, want %d", d.events, c.events)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
