package options

import (
	"errors"
	"slices"

	"github.com/karmada-failover/lab/restore/webhook"
)

// Validate checks what the command line needs to serve at all and returns every problem found,
// each naming its flags. The settings of the decision and of the callers (--on-missing,
// --user-savepoint, the templates, --insecure-allow-anonymous's endpoints, the rate limit) are
// checked, and defaulted, by webhook.Config.Validate when the handler is built.
func (o *Options) Validate() error {
	var errs []error
	if o.CertFile == "" || o.KeyFile == "" {
		errs = append(errs, errors.New("--tls-cert-file and --tls-key-file are required (the API server only calls webhooks over HTTPS)"))
	}
	if trust, err := o.Trust(); err != nil {
		errs = append(errs, err)
	} else if trust.IsEmpty() {
		errs = append(errs, errors.New("no trusted identity: pass --cluster-name=<this member's name in Karmada> (Push mode, karmadactl join), "+
			"--sync-mode=Pull (karmada-agent), or --trusted-username"))
	}
	if o.ClientCAFile == "" && !slices.Contains(o.AnonymousEndpoints(), webhook.EndpointMutate) {
		errs = append(errs, errors.New("/mutate accepts only callers with a client certificate: pass --client-ca-file (and have the API server present a "+
			"certificate it signed, see restore/README.md), or --insecure-allow-anonymous=mutate in a lab"))
	}
	return errors.Join(errs...)
}
