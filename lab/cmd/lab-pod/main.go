// Command lab-pod runs one process of the hermetic lab as a Kubernetes pod
// would (lab/internal/pod): in network and mount namespaces of its own, with a
// loopback only, its ServiceAccount token at the in-cluster path, renewed
// before it expires, and only the ports named here connected to the host's
// 127.0.0.1:
//
//	lab-pod --expose=127.0.0.1:25120=9443 \
//	        --reach=443=127.0.0.1:25001 --reach=24600=127.0.0.1:24601 \
//	        --kubeconfig=members.config --context=member1 \
//	        --service-account=kyverno/kyverno-admission-controller \
//	        -- kyverno -serverIP=127.0.0.1:25120 -webhookServerPort=9443 ...
//
// --expose HOST=POD publishes the pod's port POD on HOST; --reach POD=HOST
// makes the pod's 127.0.0.1:POD lead to HOST (the pod's "Service"). SIGTERM
// reaches the command; lab-pod exits with it. Linux only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/karmada-failover/lab/lab/internal/pod"
)

type list []string

func (l *list) String() string     { return fmt.Sprint(*l) }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	if pod.IsInit() {
		pod.Init()
		return
	}
	var expose, reach list
	flag.Var(&expose, "expose", "HOST_ADDR=POD_PORT: publish the pod's port on the host's loopback (repeatable)")
	flag.Var(&reach, "reach", "POD_PORT=HOST_ADDR: the pod's 127.0.0.1:POD_PORT leads to the host's address (repeatable)")
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the API server that issues the ServiceAccount token")
	kubecontext := flag.String("context", "", "context of --kubeconfig")
	sa := flag.String("service-account", "", "NAMESPACE/NAME: mount a token of this ServiceAccount at "+pod.ServiceAccountPath)
	ttl := flag.Duration("token-ttl", time.Hour, "lifetime of each ServiceAccount token (renewed at 80 %)")
	grace := flag.Duration("grace", 20*time.Second, "time between SIGTERM and SIGKILL for the command")
	dir := flag.String("dir", "", "the pod's folder (sockets, ServiceAccount volume), emptied at start and removed at the end; default a new temporary folder")
	flag.Parse()
	if err := run(expose, reach, *kubeconfig, *kubecontext, *sa, *ttl, *grace, *dir, flag.Args()); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			os.Exit(exit.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "lab-pod:", err)
		os.Exit(1)
	}
}

func run(expose, reach []string, kubeconfig, kubecontext, sa string, ttl, grace time.Duration, dir string, command []string) error {
	s := pod.Spec{Command: command, Grace: grace, Dir: dir}
	for _, e := range expose {
		x, err := pod.ParseExpose(e)
		if err != nil {
			return err
		}
		s.Expose = append(s.Expose, x)
	}
	for _, r := range reach {
		x, err := pod.ParseReach(r)
		if err != nil {
			return err
		}
		s.Reach = append(s.Reach, x)
	}
	if sa != "" {
		ns, name, err := pod.ParseServiceAccount(sa)
		if err != nil {
			return err
		}
		if kubeconfig == "" {
			return fmt.Errorf("--service-account needs --kubeconfig")
		}
		s.Token = &pod.Token{Kubeconfig: kubeconfig, Context: kubecontext, Namespace: ns, Name: name, TTL: ttl}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return pod.Run(ctx, s)
}
