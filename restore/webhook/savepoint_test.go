package webhook

import (
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
)

const (
	// staleSP is a savepoint the template still carries from the job's first
	// deployment.
	staleSP = "s3://flink-checkpoints/team-a/wordcount-sp/savepoint-1a2b3c"
	// otherSP is a savepoint outside the namespace's area.
	otherSP = "s3://flink-checkpoints/team-b/sp/savepoint-9"
)

var (
	overridePatch = patch(
		`{"op":"add","path":"/spec/job/initialSavepointPath","value":"`+chk12+`"}`, setSavepoint,
		annOps(AnnotationCheckpoint, chk12, AnnotationDecision, DecisionRestoredOverUserSavepoint,
			AnnotationFromJobID, oldJob, AnnotationReplacedSavepoint, staleSP))
	keptPatch = decisionPatch(DecisionKeptUserSavepoint, true)
)

// TestUserSavepoint: a template's stale initialSavepointPath does not rewind
// the job when the carried job has a newer checkpoint.
func TestUserSavepoint(t *testing.T) {
	cases := []struct {
		name      string
		cfg       func(*Config)
		completed map[string]time.Time // savepoint completion times the store knows
		op        admissionv1.Operation
		object    []byte
		oldObject []byte

		want      expect
		lookups   int
		statCalls int
	}{
		{
			name:      "override: checkpoint newer than the savepoint",
			completed: map[string]time.Time{staleSP: chk12Written.Add(-30 * 24 * time.Hour)},
			object:    fd(marker(), karmadaAnn(), conf(ckptDir), job("initialSavepointPath", staleSP)),

			want: expect{allowed: true, patch: overridePatch}, lookups: 1, statCalls: 1,
		},
		{
			name:      "override: savepoint completion unknown, the carried job's checkpoint wins",
			completed: map[string]time.Time{},
			object:    fd(marker(), karmadaAnn(), conf(ckptDir), job("initialSavepointPath", staleSP)),

			want: expect{allowed: true, patch: overridePatch}, lookups: 1, statCalls: 1,
		},
		{
			name:      "override: savepoint taken after the latest checkpoint is kept",
			completed: map[string]time.Time{staleSP: chk12Written.Add(time.Second)},
			object:    fd(marker(), karmadaAnn(), conf(ckptDir), job("initialSavepointPath", staleSP)),

			want:    expect{allowed: true, patch: keptPatch, warning: "keeping initialSavepointPath " + staleSP + ": it completed at 2026-12-01T09:59:31Z, not before the latest checkpoint " + chk12},
			lookups: 1, statCalls: 1,
		},
		{
			name:   "override: savepoint outside the namespace's area is not read",
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job("initialSavepointPath", otherSP)),

			want: expect{allowed: true, patch: patch(
				`{"op":"add","path":"/spec/job/initialSavepointPath","value":"`+chk12+`"}`, setSavepoint,
				annOps(AnnotationCheckpoint, chk12, AnnotationDecision, DecisionRestoredOverUserSavepoint,
					AnnotationFromJobID, oldJob, AnnotationReplacedSavepoint, otherSP))},
			lookups: 1, statCalls: 0,
		},
		{
			name:   "override: no completed checkpoint, the savepoint is kept",
			object: fd(marker(), karmadaAnn(), conf("s3://flink-checkpoints/team-a/empty"), job("initialSavepointPath", staleSP)),

			want: expect{allowed: true, patch: keptPatch}, lookups: 1,
		},
		{
			name:   "override: store unreachable, denied during the grace period",
			object: fd(marker(), karmadaAnn(), conf("s3://flink-checkpoints/team-a/broken"), job("initialSavepointPath", staleSP)),

			want: expect{code: 503, message: "after that the job starts from the template's initialSavepointPath " + staleSP}, lookups: 1,
		},
		{
			name:   "override: store unreachable after the grace period, the savepoint is kept",
			object: fd(marker(), expiredAnn(), conf("s3://flink-checkpoints/team-a/broken"), job("initialSavepointPath", staleSP)),

			want: expect{allowed: true, patch: decisionPatch(DecisionLookupFailed, true), events: 1,
				warning: "the job starts from the template's initialSavepointPath " + staleSP},
			lookups: 1,
		},
		{
			name:   "keep: the template's savepoint is kept without a lookup",
			cfg:    func(c *Config) { c.UserSavepoint = UserSavepointKeep },
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job("initialSavepointPath", staleSP)),

			want: expect{allowed: true, patch: keptPatch},
		},
		{
			name:   "UPDATE re-applying the stale savepoint after an override: checkpoint carried forward",
			op:     admissionv1.Update,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job("initialSavepointPath", staleSP)),
			oldObject: fd(marker(), karmadaAnn(AnnotationDecision, DecisionRestoredOverUserSavepoint, AnnotationCheckpoint, chk12,
				AnnotationFromJobID, oldJob, AnnotationReplacedSavepoint, staleSP), conf(ckptDir), job("initialSavepointPath", chk12, "upgradeMode", "savepoint")),

			want: expect{allowed: true, patch: overridePatch},
		},
		{
			name:   "UPDATE setting a different savepoint after an override: left to the user",
			op:     admissionv1.Update,
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job("initialSavepointPath", staleSP+"-newer")),
			oldObject: fd(marker(), karmadaAnn(AnnotationDecision, DecisionRestoredOverUserSavepoint, AnnotationCheckpoint, chk12,
				AnnotationFromJobID, oldJob, AnnotationReplacedSavepoint, staleSP), conf(ckptDir), job("initialSavepointPath", chk12)),

			want: expect{allowed: true},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			loc := newFakeLocator()
			for k, v := range c.completed {
				loc.completed[k] = v
			}
			h, events := newTestHandler(t, loc, c.cfg)
			c.want.check(t, roundTrip(t, h, admissionRequest(c.op, karmadaSA, c.object, c.oldObject)), events.list())
			if len(loc.calls) != c.lookups || len(loc.statCalls) != c.statCalls {
				t.Errorf("lookups %v, stats %v; want %d and %d", loc.calls, loc.statCalls, c.lookups, c.statCalls)
			}
		})
	}
}
