package kind

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/karmada-failover/lab/apis/flink"
	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/internal/manifest"
	"github.com/karmada-failover/lab/lab/internal/pki"
	"github.com/karmada-failover/lab/lab/internal/poll"
)

// Manifests are the kind lab's own manifests (text/template), rendered into
// the lab folder's manifests/ before they are applied.
//
//go:embed manifests/*.yaml
var Manifests embed.FS

// S3Credentials are the lab's MinIO root credentials, made once per lab folder.
type S3Credentials = lab.S3Credentials

// s3CredentialsFile is where the lab keeps its MinIO credentials.
func (l *Lab) s3CredentialsFile() string { return filepath.Join(l.Cfg.Dir, "s3-credentials.json") }

// S3Credentials are the running lab's MinIO credentials, with its S3 API as this host
// reaches it (lab.CheckpointStore).
func (l *Lab) S3Credentials() (*lab.S3Credentials, error) {
	c, err := lab.ReadS3Credentials(l.s3CredentialsFile())
	if err != nil {
		return nil, err
	}
	if c.Endpoint == "" {
		c.Endpoint = fmt.Sprintf("http://127.0.0.1:%d", S3Port)
	}
	if c.Region == "" {
		c.Region = "us-east-1"
	}
	return c, nil
}

func (l *Lab) s3Credentials() (*S3Credentials, error) {
	path := l.s3CredentialsFile()
	if c, err := lab.ReadS3Credentials(path); err == nil || !errors.Is(err, os.ErrNotExist) {
		return c, err
	}
	secret := make([]byte, 24)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	c := &S3Credentials{AccessKey: "failover-lab", SecretKey: hex.EncodeToString(secret), Bucket: lab.CheckpointBucket}
	if err := os.MkdirAll(l.Cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	return c, lab.WriteS3Credentials(path, c)
}

// render renders manifests/<tmpl> with data into the lab folder's manifests/<out>
// and returns its path (mode 0600: some carry the lab's S3 credentials).
func (l *Lab) render(tmpl, out string, data map[string]any) (string, error) {
	b, err := RenderManifest(tmpl, data)
	if err != nil {
		return "", err
	}
	path := filepath.Join(l.Cfg.ManifestDir(), out)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, b, 0o600)
}

// RenderManifest renders manifests/<name>: each {{Key}} is replaced by data[Key]; a
// placeholder without a value, or a value without a placeholder, is an error.
func RenderManifest(name string, data map[string]any) ([]byte, error) {
	src, err := Manifests.ReadFile("manifests/" + name)
	if err != nil {
		return nil, err
	}
	return manifest.Render("lab/kind/manifests/"+name, src, manifest.Values(data)...)
}

// applyOn applies a manifest file to one of the lab's clusters (server-side apply).
func (l *Lab) applyOn(ctx context.Context, cluster, path string) error {
	k, err := l.kubeOn(cluster)
	if err != nil {
		return err
	}
	return k.applyFile(ctx, path)
}

// karmadaKube is a client of the Karmada API server.
func (l *Lab) karmadaKube() (*kube, error) {
	return newKube(l.Cfg.KarmadaKubeconfig(), config.KarmadaContext)
}

// SeaweedFSImage is the S3 store's image where the lab builds its images.
func (l *Lab) SeaweedFSImage() string { return "failover-lab/seaweedfs:" + l.ImageTag }

// SeaweedFSData is the data manifests/seaweedfs.yaml is rendered with.
func SeaweedFSData(image string, creds *S3Credentials) map[string]any {
	return map[string]any{"Image": image, "NodePort": MinIONodePort, "HostPort": S3Port,
		"AccessKey": creds.AccessKey, "SecretKey": creds.SecretKey, "Bucket": lab.CheckpointBucket}
}

// installCheckpointStore runs the S3 store on the host cluster: MinIO's image
// where images are pulled, SeaweedFS built here otherwise; the checkpoint
// bucket; and on each member a checkpoint-store Service that reaches it.
func (l *Lab) installCheckpointStore(ctx context.Context) error {
	creds, err := l.s3Credentials()
	if err != nil {
		return err
	}
	tmpl, deploy, data := "minio.yaml", "minio", map[string]any{"Image": MinIOImage, "NodePort": MinIONodePort, "HostPort": S3Port,
		"AccessKey": creds.AccessKey, "SecretKey": creds.SecretKey}
	if l.images == ImagesBuild {
		tmpl, deploy, data = "seaweedfs.yaml", "seaweedfs", SeaweedFSData(l.SeaweedFSImage(), creds)
	}
	f, err := l.render(tmpl, tmpl, data)
	if err != nil {
		return err
	}
	host, err := l.kubeOn(HostCluster)
	if err != nil {
		return err
	}
	if err := host.applyFile(ctx, f); err != nil {
		return err
	}
	if err := host.rolloutStatus(ctx, "checkpoint-store", deploy, 5*time.Minute); err != nil {
		return err
	}
	if err := createBucket(ctx, fmt.Sprintf("http://127.0.0.1:%d", S3Port), creds); err != nil {
		return err
	}
	hostIP, err := l.run(ctx, "host-ip", "docker", "inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", NodeContainer(HostCluster))
	if err != nil {
		return err
	}
	hostIP = strings.TrimSpace(hostIP)
	if hostIP == "" {
		return errors.New("the host cluster's node container has no IP address on the kind network")
	}
	for _, m := range l.Cfg.MemberNames() {
		f, err := l.render("checkpoint-store-member.yaml", "checkpoint-store-"+m+".yaml", map[string]any{"HostIP": hostIP, "NodePort": MinIONodePort})
		if err != nil {
			return err
		}
		if err := l.applyOn(ctx, m, f); err != nil {
			return err
		}
	}
	return nil
}

// createBucket creates the checkpoint bucket through MinIO's S3 API (retrying
// while MinIO starts); an existing bucket is fine.
func createBucket(ctx context.Context, endpoint string, creds *S3Credentials) error {
	client := s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(creds.AccessKey, creds.SecretKey, ""),
	})
	return poll.Until(ctx, 2*time.Minute, 3*time.Second, "bucket "+lab.CheckpointBucket+" at "+endpoint, func(ctx context.Context) (bool, error) {
		_, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(lab.CheckpointBucket)})
		var owned *s3types.BucketAlreadyOwnedByYou
		return err == nil || errors.As(err, &owned), err
	})
}

func (l *Lab) helmInstall(ctx context.Context, cluster string, c Chart, extra ...string) error {
	return l.helmInstallFrom(ctx, cluster, c, []string{c.Name, "--repo", c.Repo, "--version", c.Version}, extra...)
}

// helmInstallFrom installs or upgrades c's release in cluster from chart (a name and its
// repository, or a local folder).
func (l *Lab) helmInstallFrom(ctx context.Context, cluster string, c Chart, chart []string, extra ...string) error {
	args := append(append([]string{"upgrade", "--install", c.Release}, chart...),
		"--namespace", c.Namespace, "--create-namespace", "--kubeconfig", l.kubeconfigOf(cluster),
		"--wait", "--timeout", "10m")
	_, err := l.run(ctx, "helm-"+c.Release+"-"+cluster, l.Cfg.Bins.Helm, append(args, extra...)...)
	return err
}

// writeValues writes the embedded manifests/<name> (a chart's values) into the lab's
// manifests folder and returns its path.
func (l *Lab) writeValues(name string) (string, error) {
	values, err := Manifests.ReadFile("manifests/" + name)
	if err != nil {
		return "", err
	}
	path := filepath.Join(l.Cfg.ManifestDir(), name)
	return path, os.WriteFile(path, values, 0o644)
}

func (l *Lab) installOperators(ctx context.Context) error {
	if l.images == ImagesBuild {
		fmt.Fprintln(l.out, "   skipped: cert-manager's and flink-kubernetes-operator's images come only from their registries")
		return nil
	}
	valuesFile, err := l.writeValues("flink-operator-values.yaml")
	if err != nil {
		return err
	}
	for _, m := range l.Cfg.MemberNames() {
		if err := l.helmInstall(ctx, m, CertManager, "--set", "crds.enabled=true"); err != nil {
			return err
		}
		if err := l.helmInstall(ctx, m, FlinkOperator, "--values", valuesFile); err != nil {
			return err
		}
	}
	// Karmada needs the operator's CRD to accept FlinkDeployment templates: copy
	// the one the chart installed on member1.
	k, err := l.kubeOn(l.Cfg.MemberNames()[0])
	if err != nil {
		return err
	}
	obj, err := k.get(ctx, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", flink.CRDName)
	if err != nil {
		return err
	}
	crd, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	portable, err := portableObject(crd)
	if err != nil {
		return fmt.Errorf("the operator's FlinkDeployment CRD: %w", err)
	}
	crdFile := filepath.Join(l.Cfg.ManifestDir(), "flinkdeployments-crd.json")
	if err := os.WriteFile(crdFile, portable, 0o644); err != nil {
		return err
	}
	karmada, err := l.karmadaKube()
	if err != nil {
		return err
	}
	if err := karmada.applyFile(ctx, crdFile); err != nil {
		return err
	}
	return waitCRD(ctx, karmada)
}

// portableObject drops an object's status and server-set metadata (uid,
// resourceVersion, managedFields, ...), so it can be applied to another API server.
func portableObject(b []byte) ([]byte, error) {
	var obj map[string]any
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, err
	}
	delete(obj, "status")
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil || meta["name"] == nil {
		return nil, errors.New("no metadata.name")
	}
	kept := map[string]any{"name": meta["name"]}
	if labels, ok := meta["labels"]; ok {
		kept["labels"] = labels
	}
	obj["metadata"] = kept
	return json.MarshalIndent(obj, "", "  ")
}

// RestoreWebhookServiceDNS is the name the members' API servers call the restore webhook by.
const RestoreWebhookServiceDNS = "flink-restore-webhook.flink-restore.svc"

// restoreWebhookTLS puts the restore webhook's serving certificate into the
// member: from cert-manager where images are pulled, otherwise issued by the
// lab's own CA (lab/internal/pki, in the lab folder's kind/pki) and applied as
// the Secret the webhook serves with (tls.crt, tls.key, ca.crt).
func (l *Lab) restoreWebhookTLS(ctx context.Context, member string) error {
	if l.images != ImagesBuild {
		f, err := l.render("restore-webhook-certificate.yaml", "restore-webhook-certificate-"+member+".yaml", map[string]any{"ServiceDNS": RestoreWebhookServiceDNS})
		if err != nil {
			return err
		}
		k, err := l.kubeOn(member)
		if err != nil {
			return err
		}
		if err := k.applyFile(ctx, f); err != nil {
			return err
		}
		return k.waitCondition(ctx, "cert-manager.io/v1", "Certificate", "flink-restore", "flink-restore-webhook", "Ready", 3*time.Minute)
	}
	dir := filepath.Join(l.kindDir(), "pki")
	if err := pki.ServingPair(dir, pki.RestoreWebhook, "flink-restore-webhook", []string{RestoreWebhookServiceDNS, RestoreWebhookServiceDNS + ".cluster.local"}); err != nil {
		return err
	}
	data := map[string]string{}
	for key, path := range map[string]string{"tls.crt": pki.CertFile(dir, pki.RestoreWebhook), "tls.key": pki.KeyFile(dir, pki.RestoreWebhook), "ca.crt": pki.CertFile(dir, pki.CA)} {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		data[key] = base64.StdEncoding.EncodeToString(b)
	}
	secret, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
		"metadata": map[string]any{"name": "flink-restore-webhook-tls", "namespace": "flink-restore"}, "data": data})
	if err != nil {
		return err
	}
	f := filepath.Join(l.Cfg.ManifestDir(), "restore-webhook-tls-"+member+".json")
	if err := os.WriteFile(f, secret, 0o600); err != nil {
		return err
	}
	return l.applyOn(ctx, member, f)
}

func (l *Lab) installRestore(ctx context.Context) error {
	creds, err := l.s3Credentials()
	if err != nil {
		return err
	}
	for _, m := range l.Cfg.MemberNames() {
		f, err := l.render("restore-webhook.yaml", "restore-webhook-"+m+".yaml", map[string]any{"Image": l.RestoreWebhookImage(), "Port": l.Cfg.Ports.RestoreWebhook,
			"Member": m, "AccessKey": creds.AccessKey, "SecretKey": creds.SecretKey})
		if err != nil {
			return err
		}
		k, err := l.kubeOn(m)
		if err != nil {
			return err
		}
		if err := k.applyFile(ctx, f); err != nil {
			return err
		}
		if err := k.applyFile(ctx, filepath.Join(l.Cfg.Root, "restore", "deploy", "rbac.yaml")); err != nil {
			return err
		}
		if err := l.restoreWebhookTLS(ctx, m); err != nil {
			return err
		}
		if err := k.rolloutStatus(ctx, "flink-restore", "flink-restore-webhook", 5*time.Minute); err != nil {
			return err
		}
		// The webhook restores until Kyverno takes over (LAB_RESTORE=kyverno: upKyverno).
		if err := l.registerRestoreWebhook(ctx, m); err != nil {
			return err
		}
	}
	if l.images == ImagesBuild {
		return nil // no Flink operator to run the demo (docs/KIND.md)
	}
	return l.renderFlinkDemo(creds)
}

func (l *Lab) renderFlinkDemo(creds *S3Credentials) error {
	_, err := l.render("flink-demo.yaml", "flink-demo.yaml", FlinkDemoData(l.FlinkJobImage(), l.Cfg.MemberNames(), creds))
	return err
}

// FlinkDemoData is the data manifests/flink-demo.yaml is rendered with.
func FlinkDemoData(image string, members []string, creds *S3Credentials) map[string]any {
	return map[string]any{"Image": image, "Members": strings.Join(members, ", "), "AccessKey": creds.AccessKey, "SecretKey": creds.SecretKey}
}
