//go:build e2e

package e2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/karmada-failover/lab/e2e/framework"
	"github.com/karmada-failover/lab/lab/config"
)

// Who changed a restored FlinkDeployment: the restore webhook records its
// decision; the Kyverno policy (restore/deploy/kyverno-clusterpolicy.yaml)
// adds its mark beside it.
const (
	decisionAnnotation  = "restore.lab.karmada.io/decision"
	mutatedByAnnotation = "restore.lab.karmada.io/mutated-by"
	kyvernoMark         = "kyverno/flink-restore-from-latest-checkpoint"
)

// restoreMode is how the lab's members restore a failed-over FlinkDeployment now.
func restoreMode(l *framework.Lab) string {
	return l.Provider.Restore()
}

// expectMutatedBy checks, on the annotations of a FlinkDeployment the restore
// path admitted, that the lab's current restore path made the change: Kyverno's
// mark with Kyverno, none with the webhook.
func expectMutatedBy(l *framework.Lab, annotations map[string]string) {
	GinkgoHelper()
	if restoreMode(l) == config.RestoreKyverno {
		Expect(annotations).To(HaveKeyWithValue(mutatedByAnnotation, kyvernoMark), "Kyverno's policy admitted it")
		return
	}
	Expect(annotations).NotTo(HaveKey(mutatedByAnnotation), "the restore webhook admitted it, not Kyverno")
}

// withRestore runs the specs of the Ordered container it is called in with the
// members restoring by mode, and puts the lab's mode back after them (also
// after a switch that failed half-way: SetRestore finishes or undoes it). A
// lab that chooses its mode only when it comes up (kind: LAB_RESTORE) runs
// them when it came up with mode and skips them otherwise, saying how.
func withRestore(mode string) {
	var before string
	var switched bool
	BeforeAll(func(ctx SpecContext) {
		before = restoreMode(lab)
		if before == mode {
			return
		}
		By(fmt.Sprintf("switching the members' restore path from %s to %s", before, mode))
		switched = true
		Expect(lab.Provider.SetRestore(ctx, mode)).To(Succeed())
	}, NodeTimeout(20*time.Minute))
	AfterAll(func(ctx SpecContext) {
		if !switched {
			return
		}
		By(fmt.Sprintf("switching the members' restore path back to %s", before))
		Expect(lab.Provider.SetRestore(ctx, before)).To(Succeed())
	}, NodeTimeout(20*time.Minute))
}
