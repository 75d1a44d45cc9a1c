package kind

// Chart is a pinned Helm chart from a chart repository.
type Chart struct {
	Release, Namespace string
	Repo, Name         string
	Version            string
	// CRDModule is the Go module (path@version, with its go.sum hash) that
	// carries the CRDs of the chart's app version; make verify-kind-lab
	// validates the lab's custom resources against them.
	CRDModule, CRDModuleSum string
}

// Pinned third-party components of the kind lab. The kindest/node image is
// pinned in clusters.go (NodeImage); Karmada's images are built from the tree
// and the Flink base image follows lab/flink/pom.xml.
var (
	// CertManager issues the restore webhook's serving certificate and the
	// flink-kubernetes-operator's webhook certificate.
	CertManager = Chart{Release: "cert-manager", Namespace: "cert-manager",
		Repo: "https://charts.jetstack.io", Name: "cert-manager", Version: "v1.18.2",
		CRDModule: "github.com/cert-manager/cert-manager@v1.18.2", CRDModuleSum: "h1:H2P75ycGcTMauV3gvpkDqLdS3RSXonWF2S49QGA1PZE="}
	// FlinkOperator is the Apache Flink Kubernetes operator, from the chart
	// repository of its release on Apache's archive (which keeps every
	// release; downloads.apache.org keeps only the current ones).
	FlinkOperator = Chart{Release: "flink-kubernetes-operator", Namespace: "flink-operator",
		Repo: "https://archive.apache.org/dist/flink/flink-kubernetes-operator-1.15.0/", Name: "flink-kubernetes-operator", Version: "1.15.0"}
	// Kyverno runs the restore policy when LAB_RESTORE=kyverno (chart 3.5.2 is
	// Kyverno v1.15.2).
	Kyverno = Chart{Release: "kyverno", Namespace: "kyverno",
		Repo: "https://kyverno.github.io/kyverno/", Name: "kyverno", Version: "3.5.2",
		CRDModule: "github.com/kyverno/kyverno@v1.15.2", CRDModuleSum: "h1:1eDivq33TEgHwZkPl/4Id+9p+x6/3ieg1WzBGjmHWk0="}
)

// MinIOImage is the S3 checkpoint store of the kind lab: MinIO's image, run
// as is (the hermetic lab uses SeaweedFS instead). MinIO's images are on
// quay.io; Docker Hub no longer serves minio/minio.
const MinIOImage = "quay.io/minio/minio:RELEASE.2025-09-07T16-13-09Z"
