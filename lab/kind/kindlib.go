package kind

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
	kindlog "sigs.k8s.io/kind/pkg/log"

	"github.com/karmada-failover/lab/lab/internal/logtail"
)

// The lab drives kind in-process, with kind's own library (sigs.k8s.io/kind/pkg/cluster,
// pinned by go.mod): create, delete, list, kubeconfig export, log collection and image
// loading. kind's Docker provider runs the docker CLI, which reaches the engine the lab
// chose through DOCKER_HOST in this process's environment.

// dockerEnvMu guards the process environment while the lab points kind at its engine.
var dockerEnvMu sync.Mutex

// kindProvider returns kind's Docker provider logging to logs/kind-<name>.log, with
// this process's DOCKER_HOST set for the lab's engine. done closes the log; on an
// error it returns the error with the log's last lines.
func (l *Lab) kindProvider(name string) (p *cluster.Provider, done func(error) error, err error) {
	logPath := filepath.Join(l.Cfg.LogDir(), "kind-"+name+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, nil, err
	}
	f, err := os.Create(logPath)
	if err != nil {
		return nil, nil, err
	}
	dockerEnvMu.Lock()
	for _, kv := range l.dockerEngine().Env() {
		k, v, _ := strings.Cut(kv, "=")
		if err := os.Setenv(k, v); err != nil {
			dockerEnvMu.Unlock()
			f.Close()
			return nil, nil, err
		}
	}
	dockerEnvMu.Unlock()
	p = cluster.NewProvider(cluster.ProviderWithDocker(), cluster.ProviderWithLogger(&fileLogger{f: f}))
	done = func(err error) error {
		f.Close()
		if err != nil {
			return fmt.Errorf("kind %s: %w\n%s", name, err, logtail.Indent(logtail.File(logPath, 15), "  "))
		}
		return nil
	}
	return p, done, nil
}

// kindClusters lists the kind clusters of the engine.
func (l *Lab) kindClusters() (map[string]bool, error) {
	p, done, err := l.kindProvider("get-clusters")
	if err != nil {
		return nil, err
	}
	names, err := p.List()
	if err = done(err); err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	return have, nil
}

// kindCreate creates cluster name from its kind configuration, waiting up to wait for
// its control plane, and writes its kubeconfig.
func (l *Lab) kindCreate(name, configPath string, wait time.Duration) error {
	p, done, err := l.kindProvider("create-" + name)
	if err != nil {
		return err
	}
	return done(p.Create(name, cluster.CreateWithConfigFile(configPath), cluster.CreateWithKubeconfigPath(l.kubeconfigOf(name)),
		cluster.CreateWithWaitForReady(wait), cluster.CreateWithDisplayUsage(false), cluster.CreateWithDisplaySalutation(false)))
}

// kindExportKubeconfig writes cluster name's kubeconfig (for the host: its published port).
func (l *Lab) kindExportKubeconfig(name string) error {
	p, done, err := l.kindProvider("kubeconfig-" + name)
	if err != nil {
		return err
	}
	return done(p.ExportKubeConfig(name, l.kubeconfigOf(name), false))
}

// kindDelete deletes cluster name and its kubeconfig entry.
func (l *Lab) kindDelete(name string) error {
	p, done, err := l.kindProvider("delete-" + name)
	if err != nil {
		return err
	}
	return done(p.Delete(name, l.kubeconfigOf(name)))
}

// kindCollectLogs writes cluster name's logs into dir, as `kind export logs` does.
func (l *Lab) kindCollectLogs(name, dir string) error {
	p, done, err := l.kindProvider("export-logs-" + name)
	if err != nil {
		return err
	}
	return done(p.CollectLogs(name, dir))
}

// kindLoad loads images from the engine into every node of cluster name, as `kind load
// docker-image` does: a node that already has an image under the same ID is skipped.
func (l *Lab) kindLoad(ctx context.Context, name string, images ...string) error {
	ids := map[string]string{}
	for _, img := range images {
		id, err := l.run(ctx, "docker-image-id", "docker", "image", "inspect", "-f", "{{.Id}}", img)
		if err != nil {
			return fmt.Errorf("image %s is not in the lab's Docker engine: %w", img, err)
		}
		ids[img] = strings.TrimSpace(id)
	}
	p, done, err := l.kindProvider("load-" + name)
	if err != nil {
		return err
	}
	nodes, err := p.ListInternalNodes(name)
	if err != nil {
		return done(err)
	}
	if len(nodes) == 0 {
		return done(fmt.Errorf("cluster %s has no nodes", name))
	}
	for _, n := range nodes {
		var missing []string
		for _, img := range images {
			if id, err := nodeutils.ImageID(n, img); err != nil || id != ids[img] {
				missing = append(missing, img)
			}
		}
		if len(missing) == 0 {
			continue
		}
		if err := l.loadInto(ctx, n.String(), missing, func(f *os.File) error { return nodeutils.LoadImageArchive(n, f) }); err != nil {
			return done(err)
		}
	}
	return done(nil)
}

// loadInto saves images from the engine to an archive and hands it to load.
func (l *Lab) loadInto(ctx context.Context, node string, images []string, load func(*os.File) error) error {
	tmp, err := os.MkdirTemp(l.Cfg.Dir, ".kind-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	archive := filepath.Join(tmp, "images.tar")
	if _, err := l.run(ctx, "docker-save", "docker", append([]string{"save", "-o", archive}, images...)...); err != nil {
		return err
	}
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := load(f); err != nil {
		return fmt.Errorf("loading %s into %s: %w", strings.Join(images, " "), node, err)
	}
	return nil
}

// fileLogger is kind's logger writing to the lab's log file of a kind operation.
type fileLogger struct {
	mu sync.Mutex
	f  *os.File
}

func (l *fileLogger) write(prefix, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.f, "%s%s\n", prefix, strings.TrimRight(msg, "\n"))
}

func (l *fileLogger) Warn(message string)                      { l.write("WARN: ", message) }
func (l *fileLogger) Warnf(format string, args ...interface{}) { l.Warn(fmt.Sprintf(format, args...)) }
func (l *fileLogger) Error(message string)                     { l.write("ERROR: ", message) }
func (l *fileLogger) Errorf(format string, args ...interface{}) {
	l.Error(fmt.Sprintf(format, args...))
}
func (l *fileLogger) V(kindlog.Level) kindlog.InfoLogger { return fileInfoLogger{l} }

type fileInfoLogger struct{ l *fileLogger }

func (i fileInfoLogger) Info(message string) { i.l.write("", message) }
func (i fileInfoLogger) Infof(format string, args ...interface{}) {
	i.Info(fmt.Sprintf(format, args...))
}
func (i fileInfoLogger) Enabled() bool { return true }
