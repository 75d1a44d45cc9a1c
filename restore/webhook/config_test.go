package webhook

import (
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
)

func TestKarmadaIdentity(t *testing.T) {
	for _, c := range []struct {
		name    string
		id      KarmadaIdentity
		want    []string
		wantErr string
	}{
		{name: "push: karmadactl join member2", id: KarmadaIdentity{SyncMode: SyncModePush, ClusterNames: []string{"member2"}},
			want: []string{"system:serviceaccount:karmada-cluster:karmada-member2"}},
		{name: "push: one webhook for several members", id: KarmadaIdentity{ClusterNames: []string{"member1", "member2"}},
			want: []string{"system:serviceaccount:karmada-cluster:karmada-member1", "system:serviceaccount:karmada-cluster:karmada-member2"}},
		{name: "push: karmadactl join --cluster-namespace", id: KarmadaIdentity{ClusterNames: []string{"eu-1"}, ClusterNamespace: "karmada-creds"},
			want: []string{"system:serviceaccount:karmada-creds:karmada-eu-1"}},
		{name: "push without cluster names derives nothing", id: KarmadaIdentity{SyncMode: SyncModePush}},
		{name: "pull: karmadactl register", id: KarmadaIdentity{SyncMode: SyncModePull},
			want: []string{"system:serviceaccount:karmada-system:karmada-agent-sa"}},
		{name: "pull: Helm chart agent", id: KarmadaIdentity{SyncMode: SyncModePull, AgentServiceAccount: "karmada-system/karmada"},
			want: []string{"system:serviceaccount:karmada-system:karmada"}},
		{name: "pull ignores cluster names", id: KarmadaIdentity{SyncMode: SyncModePull, ClusterNames: []string{"member2"}},
			want: []string{"system:serviceaccount:karmada-system:karmada-agent-sa"}},
		{name: "bad mode", id: KarmadaIdentity{SyncMode: "push"}, wantErr: "sync mode must be Push or Pull"},
		{name: "bad cluster name", id: KarmadaIdentity{ClusterNames: []string{"Member_2"}}, wantErr: `cluster name "Member_2"`},
		{name: "bad agent account", id: KarmadaIdentity{SyncMode: SyncModePull, AgentServiceAccount: "karmada-agent"}, wantErr: "want namespace/name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.id.Usernames()
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// TestTrustedIdentity: the default trust is the exact identity of the sync
// mode, not every ServiceAccount of a namespace.
func TestTrustedIdentity(t *testing.T) {
	push, _ := KarmadaIdentity{SyncMode: SyncModePush, ClusterNames: []string{"member2"}}.Usernames()
	pull, _ := KarmadaIdentity{SyncMode: SyncModePull}.Usernames()
	for _, c := range []struct {
		name  string
		trust Trust
		user  authenticationv1.UserInfo
		want  bool
	}{
		{"push: karmada-member2", Trust{Usernames: push}, karmadaSA, true},
		{"push: another SA in karmada-cluster", Trust{Usernames: push}, otherClusterSA, false},
		{"push: the impersonator", Trust{Usernames: push}, impersonatorSA, false},
		{"push: karmada-agent", Trust{Usernames: push}, agentSA, false},
		{"push: a user", Trust{Usernames: push}, alice, false},
		{"pull: karmada-agent", Trust{Usernames: pull}, agentSA, true},
		{"pull: the push-mode SA", Trust{Usernames: pull}, karmadaSA, false},
		{"group, impersonator excluded", Trust{Groups: []string{"system:serviceaccounts:karmada-cluster"}, ExcludedUsernames: []string{DefaultUntrustedUsername}}, impersonatorSA, false},
		{"explicit username beats the exclusion", Trust{Usernames: []string{DefaultUntrustedUsername}, ExcludedUsernames: []string{DefaultUntrustedUsername}}, impersonatorSA, true},
	} {
		if got := c.trust.Trusted(c.user); got != c.want {
			t.Errorf("%s: trusted = %v, want %v", c.name, got, c.want)
		}
	}

	// Pull mode end to end: the agent restores, the Push-mode SA does not.
	h, _ := newTestHandler(t, newFakeLocator(), func(c *Config) { c.Trust = Trust{Usernames: pull} })
	expect{allowed: true, patch: restorePatch}.check(t, roundTrip(t, h, admissionRequest("", agentSA, fd(marker(), karmadaAnn(), conf(ckptDir), job()), nil)), nil)
	expect{code: 403, message: "not from \"" + karmadaSA.Username + "\""}.check(t,
		roundTrip(t, h, admissionRequest("", karmadaSA, fd(marker(), karmadaAnn(), conf(ckptDir), job()), nil)), nil)
}
