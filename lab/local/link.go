package local

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/internal/link"
	"github.com/karmada-failover/lab/lab/internal/proc"
)

// The network between Karmada and each member: Karmada's Cluster apiEndpoint
// is the member's lab-link forwarder (lab/cmd/lab-link), not its API server, so
// the lab can partition Karmada from a member that keeps running. The member's
// own processes, its Flink jobs and the e2e suite (members.config) reach its
// API server directly.

func linkName(member string) string { return "lab-link-" + member }

func (l *Lab) linkPorts(member string) (config.MemberPorts, error) {
	m, err := l.Cfg.Member(member)
	if err != nil {
		return config.MemberPorts{}, err
	}
	return l.Cfg.Ports.Member(m), nil
}

// startLink starts member's link and waits for its control endpoint.
func (l *Lab) startLink(ctx context.Context, member string) error {
	mp, err := l.linkPorts(member)
	if err != nil {
		return err
	}
	control := hostPort(mp.LinkControl)
	if _, err := l.Proc.Start(proc.Spec{Name: linkName(member), Path: l.Cfg.Bins.Link, Args: linkArgs(mp)}); err != nil {
		return err
	}
	return l.Proc.WaitReady(ctx, linkName(member), proc.Probe{URL: "http://" + control + "/healthz"})
}

// linkArgs are the flags of a member's link.
func linkArgs(mp config.MemberPorts) []string {
	return []string{"--listen=" + hostPort(mp.Link), "--target=" + hostPort(mp.APIServer), "--control=" + hostPort(mp.LinkControl)}
}

// karmadaMemberKubeconfig writes the kubeconfig Karmada gets for member (the
// one karmadactl join reads): members.config's context with the link as server.
func (l *Lab) karmadaMemberKubeconfig(member string) (string, error) {
	mp, err := l.linkPorts(member)
	if err != nil {
		return "", err
	}
	cfg, err := clientcmd.LoadFromFile(l.Cfg.MembersKubeconfig())
	if err != nil {
		return "", err
	}
	ctx, ok := cfg.Contexts[member]
	if !ok {
		return "", fmt.Errorf("no context %s in %s", member, l.Cfg.MembersKubeconfig())
	}
	cluster := cfg.Clusters[ctx.Cluster].DeepCopy()
	// The member's serving certificate is for 127.0.0.1: the link keeps the IP.
	cluster.Server = "https://" + hostPort(mp.Link)
	cfg.Clusters = map[string]*clientcmdapi.Cluster{member: cluster}
	cfg.AuthInfos = map[string]*clientcmdapi.AuthInfo{member: cfg.AuthInfos[ctx.AuthInfo]}
	ctx = ctx.DeepCopy()
	ctx.Cluster, ctx.AuthInfo = member, member
	cfg.Contexts = map[string]*clientcmdapi.Context{member: ctx}
	cfg.CurrentContext = member
	path := filepath.Join(l.Cfg.KwokDir(), member+"-karmada.kubeconfig")
	return path, clientcmd.WriteToFile(*cfg, path)
}

// LinkState reads member's link state.
func (l *Lab) LinkState(ctx context.Context, member string) (link.State, error) {
	return l.linkCall(ctx, member, http.MethodGet, "/state")
}

// Partition cuts Karmada off member (the member keeps running), or with heal
// restores the connection.
func (l *Lab) Partition(ctx context.Context, member string, heal bool) error {
	_, err := l.PartitionLink(ctx, member, heal)
	return err
}

// PartitionLink is Partition, returning the state of the member's link after it.
func (l *Lab) PartitionLink(ctx context.Context, member string, heal bool) (link.State, error) {
	path := "/partition"
	if heal {
		path = "/heal"
	}
	return l.linkCall(ctx, member, http.MethodPost, path)
}

func (l *Lab) linkCall(ctx context.Context, member, method, path string) (link.State, error) {
	mp, err := l.linkPorts(member)
	if err != nil {
		return link.State{}, err
	}
	if _, running := l.Proc.Running(linkName(member)); !running {
		if _, err := os.Stat(l.memberDir(member)); err != nil {
			return link.State{}, fmt.Errorf("no member %q in this lab (%s)", member, l.Cfg.KwokDir())
		}
		return link.State{}, fmt.Errorf("%s is not running (make lab-status)", linkName(member))
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, "http://"+hostPort(mp.LinkControl)+path, nil)
	if err != nil {
		return link.State{}, err
	}
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		return link.State{}, fmt.Errorf("%s: %w", linkName(member), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return link.State{}, fmt.Errorf("%s %s: %s", linkName(member), path, resp.Status)
	}
	var st link.State
	return st, json.NewDecoder(resp.Body).Decode(&st)
}
