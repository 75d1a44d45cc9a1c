package framework

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// HoldInput names the writes a Hold denies on the Karmada API server.
type HoldInput struct {
	// Name of the ValidatingAdmissionPolicy and its binding.
	Name string
	// Resource (with subresource, e.g. "resourcebindings/status") in APIGroup,
	// and the operations held.
	APIGroup, Resource string
	Operations         []admissionregistrationv1.OperationType
	// Match is a CEL condition selecting the requests held (e.g. by namespace).
	Match string
	// Allow is the CEL expression a held request must satisfy to pass.
	Allow string
}

// holdMessage begins the message of every write a Hold denies.
const holdMessage = "held by the e2e suite"

// Hold stops chosen writes of Karmada's controllers at the API server, with a
// ValidatingAdmissionPolicy (Deny), so that a scenario can kill a controller
// at an exact point of its work: after the writes before the point, before the
// held one. The controllers see a denied request and retry, as on any
// admission error; Release lets them through. Nothing in Karmada is changed.
type Hold struct {
	k    *ClusterProxy
	name string
}

// NewHold installs the policy and its binding.
func NewHold(ctx context.Context, k *ClusterProxy, in HoldInput) (*Hold, error) {
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: in.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: in.Operations,
						Rule: admissionregistrationv1.Rule{APIGroups: []string{in.APIGroup}, APIVersions: []string{"*"},
							Resources: []string{in.Resource}},
					},
				}},
			},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "held", Expression: in.Match}},
			Validations: []admissionregistrationv1.Validation{{Expression: in.Allow,
				Message: fmt.Sprintf("%s (ValidatingAdmissionPolicy %s)", holdMessage, in.Name)}},
		},
	}
	a := k.Kube().AdmissionregistrationV1()
	if _, err := a.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: in.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: in.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}},
	}
	h := &Hold{k: k, name: in.Name}
	if _, err := a.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("%w (and release: %v)", err, h.Release(ctx))
	}
	return h, nil
}

// Release removes the policy and its binding; it is idempotent.
func (h *Hold) Release(ctx context.Context) error {
	a := h.k.Kube().AdmissionregistrationV1()
	err := a.ValidatingAdmissionPolicyBindings().Delete(ctx, h.name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	err = a.ValidatingAdmissionPolicies().Delete(ctx, h.name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}
