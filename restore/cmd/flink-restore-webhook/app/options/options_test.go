package options

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/karmada-failover/lab/restore/webhook"
)

func parse(t *testing.T, args ...string) *Options {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o, err := Parse(args, fs)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestTrustFromFlags(t *testing.T) {
	for _, c := range []struct {
		name       string
		args       []string
		wantUsers  []string
		wantGroups []string
		wantErr    string
	}{
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
			trust, err := parse(t, c.args...).Trust()
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

// TestValidate checks that every problem of the command line is reported at once, each naming
// its flags.
func TestValidate(t *testing.T) {
	serving := []string{"--tls-cert-file=tls.crt", "--tls-key-file=tls.key", "--cluster-name=member1"}
	for _, c := range []struct {
		name string
		args []string
		want []string // substrings of the error; none = valid
	}{
		{name: "nothing configured", want: []string{"--tls-cert-file and --tls-key-file are required", "no trusted identity: pass --cluster-name",
			"/mutate accepts only callers with a client certificate"}},
		{name: "client CA", args: append(slices.Clone(serving), "--client-ca-file=ca.pem")},
		{name: "lab opt-out for /mutate", args: append(slices.Clone(serving), "--insecure-allow-anonymous=mutate")},
		{name: "lab opt-out for /locate only", args: append(slices.Clone(serving), "--insecure-allow-anonymous=locate"),
			want: []string{"pass --client-ca-file"}},
		{name: "bad sync mode", args: []string{"--tls-cert-file=c", "--tls-key-file=k", "--sync-mode=push", "--client-ca-file=ca.pem"},
			want: []string{"sync mode must be Push or Pull"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := parse(t, c.args...).Validate()
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate = nil, want %q", c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate = %v, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestAnonymousEndpoints(t *testing.T) {
	if got := parse(t, "--insecure-allow-anonymous=mutate, locate").AnonymousEndpoints(); !slices.Equal(got, []string{"mutate", "locate"}) {
		t.Errorf("anonymous %q", got)
	}
}

func TestFlagDefaults(t *testing.T) {
	o := parse(t)
	if o.OnMissing != webhook.OnMissingDenyUntilGrace || o.MissingGrace != webhook.DefaultMissingGrace ||
		o.UserSavepoint != webhook.UserSavepointOverride || o.Identity.SyncMode != webhook.SyncModePush ||
		!slices.Equal(o.LocateUsers.Values, []string{webhook.DefaultLocateCaller}) || o.Anonymous != "" || o.Listen != DefaultListen {
		t.Errorf("defaults %+v", o)
	}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := Parse([]string{"--failure-policy=fail"}, fs); err == nil {
		t.Error("--failure-policy (replaced by --on-missing) still accepted")
	}
}
