package kind

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"
)

// Image modes of the kind lab (LAB_IMAGES).
const (
	// ImagesAuto pulls where a registry answers, and builds otherwise.
	ImagesAuto = "auto"
	// ImagesBuild builds every image on the machine from Debian's packages
	// and Go modules (lab/kind/images).
	ImagesBuild = "build"
	// ImagesPull pulls kind's node image and the pinned third-party images.
	ImagesPull = "pull"
)

// RegistryProbe is the registry whose answer makes LAB_IMAGES=auto pull:
// kind's node images and Kubernetes' own images are served from it.
const RegistryProbe = "registry.k8s.io:443"

// ResolveImages decides LAB_IMAGES=auto (or ""): pull when the registry
// answers within a few seconds, build otherwise; it says why.
func ResolveImages(ctx context.Context, mode string, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (string, string, error) {
	switch mode {
	case ImagesBuild, ImagesPull:
		return mode, "LAB_IMAGES=" + mode, nil
	case "", ImagesAuto:
	default:
		return "", "", fmt.Errorf("LAB_IMAGES=%q: want %q (default), %q or %q", mode, ImagesAuto, ImagesBuild, ImagesPull)
	}
	if dial == nil {
		d := net.Dialer{Timeout: 5 * time.Second}
		dial = d.DialContext
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := dial(ctx, "tcp", RegistryProbe)
	if err != nil {
		return ImagesBuild, fmt.Sprintf("%s does not answer (%v): every image is built here", RegistryProbe, err), nil
	}
	_ = conn.Close()
	return ImagesPull, RegistryProbe + " answers: kind's node image and the pinned images are pulled", nil
}

// buildNodeImage builds (or finds, by its key) the lab's node image.
func (l *Lab) buildNodeImage(ctx context.Context) (Node, error) {
	out, err := l.runIn(ctx, l.Cfg.Root, nil, "build-node-image", filepath.Join(l.Cfg.Root, "lab", "kind", "images", "build-node-image.sh"))
	if err != nil {
		return Node{}, err
	}
	return ParseNodeImageOutput(out)
}

// ParseNodeImageOutput reads build-node-image.sh's NODE_IMAGE=,
// ETCD_IMAGE_TAG= and KUBERNETES_VERSION= lines.
func ParseNodeImageOutput(out string) (Node, error) {
	n := Node{Built: true}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "NODE_IMAGE="); ok {
			n.Image = v
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "ETCD_IMAGE_TAG="); ok {
			n.EtcdImageTag = v
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "KUBERNETES_VERSION="); ok {
			n.KubernetesVersion = v
		}
	}
	if n.Image == "" || n.EtcdImageTag == "" || n.KubernetesVersion == "" {
		return Node{}, fmt.Errorf("build-node-image.sh named no NODE_IMAGE, ETCD_IMAGE_TAG and KUBERNETES_VERSION; it printed:\n%s", out)
	}
	return n, nil
}
