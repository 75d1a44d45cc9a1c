package webhook

import (
	"strings"
	"testing"
	"time"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// TestOnMissing runs every "no state to restore" path through every
// on-missing policy: none of them admits an object without state silently.
func TestOnMissing(t *testing.T) {
	causes := []struct {
		name     string
		user     authenticationv1.UserInfo
		object   func(ann map[string]string) []byte
		code     int32
		message  string
		decision string
		jobID    bool // from-job-id annotation when admitted
	}{
		{"untrusted requester", alice,
			func(ann map[string]string) []byte { return fd(marker(), ann, conf(ckptDir), job()) },
			403, "honoured only from Karmada's identity", DecisionIgnoredUntrusted, false},
		{"marker without job id, no checkpoint of any job in the directory", karmadaSA,
			func(ann map[string]string) []byte {
				return fd(marker(DefaultJobIDKey, ""), ann, conf("s3://flink-checkpoints/team-a/empty"), job())
			},
			400, "Karmada could not extract the job id", DecisionNoJobID, false},
		{"state withheld by Karmada (the old job is not confirmed stopped)", karmadaSA,
			func(ann map[string]string) []byte {
				withheld := map[string]string{workv1alpha2.FailoverStateWithheldAnnotation: "member1"}
				for k, v := range ann {
					withheld[k] = v
				}
				return fd(marker(), withheld, conf(ckptDir), job())
			},
			409, "Karmada withholds the old job's state because the job on member1 is not confirmed stopped", DecisionStateWithheld, true},
		{"no checkpoint dir (operator defaults)", karmadaSA,
			func(ann map[string]string) []byte { return fd(marker(), ann, conf(""), job()) },
			400, "start the webhook with --default-checkpoint-dir", DecisionNoCheckpointDir, true},
		{"create-subdir false", karmadaSA,
			func(ann map[string]string) []byte {
				return fd(marker(), ann, conf(ckptDir, "execution.checkpointing.create-subdir", "false"), job())
			},
			400, "create-subdir is false", DecisionNoCheckpointDir, true},
		{"no completed checkpoint", karmadaSA,
			func(ann map[string]string) []byte {
				return fd(marker(), ann, conf("s3://flink-checkpoints/team-a/empty"), job())
			},
			404, "no completed checkpoint (chk-N/_metadata) of job " + oldJob, DecisionNoCheckpoint, true},
		{"store unreachable", karmadaSA,
			func(ann map[string]string) []byte {
				return fd(marker(), ann, conf("s3://flink-checkpoints/team-a/broken"), job())
			},
			503, "checkpoint lookup for job " + oldJob + " under s3://flink-checkpoints/team-a/broken failed", DecisionLookupFailed, true},
	}
	policies := []struct {
		name   string
		cfg    func(*Config)
		ann    map[string]string
		dryRun bool
		// admitted: the grace period is over or the policy starts fresh
		admitted bool
		message  string // extra substring: of the deny message, or of the warning
	}{
		{name: "deny-until-grace, within the grace period", ann: karmadaAnn(),
			message: "denied until 2026-12-01T10:05:00Z (failover.karmada.io/time 2026-12-01T10:00:00Z + --missing-grace=5m0s) so that Karmada retries; after that the job starts without state"},
		{name: "deny-until-grace, no failover time yet", ann: map[string]string{workv1alpha2.FailoverFromAnnotation: "member1", workv1alpha2.FailoverPreservedKeysAnnotation: DefaultJobIDKey},
			message: "denied until Karmada sets failover.karmada.io/time"},
		{name: "deny-until-grace, malformed failover time", ann: karmadaAnn(workv1alpha2.FailoverTimeAnnotation, "yesterday"),
			message: `failover.karmada.io/time="yesterday" is not an RFC 3339 time`},
		{name: "deny-until-grace, longer grace", ann: expiredAnn(), cfg: func(c *Config) { c.MissingGrace = 2 * time.Hour },
			message: "denied until 2026-12-01T11:00:00Z"},
		{name: "deny-until-grace, grace period over", ann: expiredAnn(), admitted: true,
			message: "the job starts without state (the grace period (--missing-grace=5m0s) is over)"},
		{name: "deny-until-grace, grace period over, dry run", ann: expiredAnn(), admitted: true, dryRun: true,
			message: "the grace period"},
		{name: "deny, grace period over", ann: expiredAnn(), cfg: func(c *Config) { c.OnMissing = OnMissingDeny },
			message: "denied because on-missing=deny"},
		{name: "start-fresh", ann: karmadaAnn(), cfg: func(c *Config) { c.OnMissing = OnMissingStartFresh }, admitted: true,
			message: "the job starts without state (on-missing=start-fresh)"},
	}
	for _, c := range causes {
		for _, p := range policies {
			t.Run(c.name+"/"+p.name, func(t *testing.T) {
				h, events := newTestHandler(t, newFakeLocator(), p.cfg)
				req := admissionRequest("", c.user, c.object(p.ann), nil)
				req.DryRun = &p.dryRun
				resp := roundTrip(t, h, req)
				want := expect{code: c.code, message: c.message}
				if p.admitted {
					want = expect{allowed: true, warning: c.message, patch: decisionPatch(c.decision, c.jobID)}
					if !p.dryRun {
						want.events = 1
					}
				}
				want.check(t, resp, events.list())
				got := strings.Join(resp.Warnings, "\n")
				if !resp.Allowed {
					got = resp.Result.Message
				}
				if !strings.Contains(got, p.message) {
					t.Errorf("%q does not contain %q", got, p.message)
				}
				for _, e := range events.list() {
					if !strings.HasPrefix(e, "Warning "+EventReasonNotRestored+" FlinkDeployment/team-a/wordcount: ") || !strings.Contains(e, c.message) {
						t.Errorf("event %q", e)
					}
				}
			})
		}
	}
}
