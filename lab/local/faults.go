package local

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The lab's fault injection, for tests and demos (lab.Faults). Each fault is
// something that happens to real clusters: a member Karmada cannot reach
// (Partition, link.go), a workload whose pods stop being ready in one member
// (FailPods), Flink jobs that lose their task slots (StarveFlink, flink.go). A
// component that crashes or stops (a member, the checkpoint store, the
// controller, a runner: lab.ComponentFaults) is StopComponent (record.go).

// FailPods labels the pods matching selector in namespace of one member so the
// lab's chaos stage turns them NotReady (they keep running); heal removes the
// label and they become Ready again. It returns how many pods it changed.
func (l *Lab) FailPods(ctx context.Context, member, namespace, selector string, heal bool) (int, error) {
	if selector == "" {
		return 0, fmt.Errorf("a label selector is required (e.g. app=flink-demo)")
	}
	cs, err := l.memberClient(member)
	if err != nil {
		return 0, fmt.Errorf("member %s: %w", member, err)
	}
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return 0, fmt.Errorf("listing pods %q in %s/%s: %w", selector, member, namespace, err)
	}
	if len(pods.Items) == 0 {
		return 0, fmt.Errorf("no pods match %q in namespace %s of %s", selector, namespace, member)
	}
	var value interface{} = "true"
	if heal {
		value = nil // a merge patch with null removes the label
	}
	patch, err := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{"labels": map[string]interface{}{NotReadyLabel: value}}})
	if err != nil {
		return 0, err
	}
	for _, p := range pods.Items {
		if _, err := cs.CoreV1().Pods(namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return 0, fmt.Errorf("labelling pod %s/%s in %s: %w", namespace, p.Name, member, err)
		}
	}
	return len(pods.Items), nil
}
