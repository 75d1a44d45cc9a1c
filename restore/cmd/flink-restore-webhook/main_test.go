package main

import (
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/karmada-failover/lab/restore/webhook"
)

func TestTrustFromFlags(t *testing.T) {
	for _, c := range []struct {
		name       string
		args       []string
		wantUsers  []string
		wantGroups []string
		wantErr    string
	}{
		{name: "nothing configured", args: nil, wantErr: "no trusted identity: pass --cluster-name"},
		{name: "push, karmadactl join member2", args: []string{"--cluster-name=member2"},
			wantUsers: []string{"system:serviceaccount:karmada-cluster:karmada-member2"}},
		{name: "push, one webhook for the lab's members", args: []string{"--cluster-name=member1", "--cluster-name=member2", "--cluster-name=member3"},
			wantUsers: []string{"system:serviceaccount:karmada-cluster:karmada-member1", "system:serviceaccount:karmada-cluster:karmada-member2", "system:serviceaccount:karmada-cluster:karmada-member3"}},
		{name: "pull, karmada-agent", args: []string{"--sync-mode=Pull"},
			wantUsers: []string{"system:serviceaccount:karmada-system:karmada-agent-sa"}},
		{name: "pull, Helm-installed agent", args: []string{"--sync-mode=Pull", "--karmada-agent-serviceaccount=karmada-system/karmada"},
			wantUsers: []string{"system:serviceaccount:karmada-system:karmada"}},
		{name: "an exact identity only", args: []string{"--trusted-username=system:serviceaccount:karmada-cluster:custom"},
			wantUsers: []string{"system:serviceaccount:karmada-cluster:custom"}},
		{name: "the old group default, explicitly", args: []string{"--trusted-group=system:serviceaccounts:karmada-cluster"},
			wantGroups: []string{"system:serviceaccounts:karmada-cluster"}},
		{name: "bad sync mode", args: []string{"--sync-mode=push"}, wantErr: "sync mode must be Push or Pull"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, err := parseFlags(c.args, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			trust, err := o.trust()
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(trust.Usernames, c.wantUsers) || !slices.Equal(trust.Groups, c.wantGroups) {
				t.Fatalf("trust %+v, %v", trust, err)
			}
			if !slices.Equal(trust.ExcludedUsernames, []string{webhook.DefaultUntrustedUsername}) {
				t.Errorf("excluded %q", trust.ExcludedUsernames)
			}
		})
	}
}

func TestCallerAuthFromFlags(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, c := range []struct {
		name    string
		args    []string
		anon    []string
		wantErr string
	}{
		{name: "no client CA, no opt-out", wantErr: "pass --client-ca-file"},
		{name: "client CA", args: []string{"--client-ca-file=ca.pem"}},
		{name: "lab opt-out for /mutate", args: []string{"--insecure-allow-anonymous=mutate"}, anon: []string{"mutate"}},
		{name: "lab opt-out for both", args: []string{"--insecure-allow-anonymous=mutate, locate"}, anon: []string{"mutate", "locate"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, err := parseFlags(c.args, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			auth := webhook.CallerAuth{AllowAnonymous: o.anonymousEndpoints()}
			if !slices.Equal(auth.AllowAnonymous, c.anon) {
				t.Errorf("anonymous %q, want %q", auth.AllowAnonymous, c.anon)
			}
			err = o.checkCallerAuth(auth, logger)
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Errorf("err = %v, want %q", err, c.wantErr)
			}
		})
	}
}

func TestFlagDefaults(t *testing.T) {
	o, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.onMissing != webhook.OnMissingDenyUntilGrace || o.missingGrace != webhook.DefaultMissingGrace ||
		o.userSavepoint != webhook.UserSavepointOverride || o.identity.SyncMode != webhook.SyncModePush ||
		!slices.Equal(o.locateUsers.values, []string{webhook.DefaultLocateCaller}) || o.anonymous != "" {
		t.Errorf("defaults %+v", o)
	}
	if _, err := parseFlags([]string{"--failure-policy=fail"}, io.Discard); err == nil {
		t.Error("--failure-policy (replaced by --on-missing) still accepted")
	}
}
