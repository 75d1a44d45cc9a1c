package kind

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
)

func TestResolveImages(t *testing.T) {
	ctx := context.Background()
	refuse := func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("lookup registry.k8s.io: no such host")
	}
	answer := func(context.Context, string, string) (net.Conn, error) {
		c, s := net.Pipe()
		_ = s.Close()
		return c, nil
	}
	for _, tc := range []struct {
		mode, want, why string
		dial            func(context.Context, string, string) (net.Conn, error)
	}{
		{mode: "", dial: refuse, want: ImagesBuild, why: "does not answer (lookup registry.k8s.io: no such host)"},
		{mode: ImagesAuto, dial: answer, want: ImagesPull, why: "answers"},
		{mode: ImagesBuild, dial: answer, want: ImagesBuild, why: "LAB_IMAGES=build"},
		{mode: ImagesPull, dial: refuse, want: ImagesPull, why: "LAB_IMAGES=pull"},
	} {
		got, why, err := ResolveImages(ctx, tc.mode, tc.dial)
		if err != nil || got != tc.want || !strings.Contains(why, tc.why) {
			t.Errorf("LAB_IMAGES=%q: got %q (%s), %v; want %q (%s)", tc.mode, got, why, err, tc.want, tc.why)
		}
	}
	if _, _, err := ResolveImages(ctx, "registry", refuse); err == nil || !strings.Contains(err.Error(), `LAB_IMAGES="registry"`) {
		t.Errorf("bad mode: err = %v", err)
	}
}

func TestParseNodeImageOutput(t *testing.T) {
	n, err := ParseNodeImageOutput(" ✓ coredns (8s)\nNODE_IMAGE=karmada-failover-lab/kind-node:v1.35.8-5e06db186c5c\nETCD_IMAGE_TAG=3.6.16-0\nKUBERNETES_VERSION=v1.35.8\n")
	if err != nil || !n.Built || n.Image != "karmada-failover-lab/kind-node:v1.35.8-5e06db186c5c" || n.EtcdImageTag != "3.6.16-0" || n.KubernetesVersion != "v1.35.8" {
		t.Errorf("got %+v, %v", n, err)
	}
	if _, err := ParseNodeImageOutput("NODE_IMAGE=x\nETCD_IMAGE_TAG=3.6.16-0\n"); err == nil {
		t.Error("output without KUBERNETES_VERSION: want an error")
	}
}
