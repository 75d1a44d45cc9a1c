package framework

import (
	"bytes"
	"context"
	"fmt"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// ScrapeMetrics reads an API server's /metrics, parsed by Prometheus' text
// format parser, keyed by metric family name.
func ScrapeMetrics(ctx context.Context, k *ClusterProxy) (map[string]*dto.MetricFamily, error) {
	raw, err := k.Kube().CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s /metrics: %w", k.Name, err)
	}
	families, err := ParseMetrics(raw)
	if err != nil {
		return nil, fmt.Errorf("%s /metrics: %w", k.Name, err)
	}
	return families, nil
}

// ParseMetrics parses Prometheus' text exposition format.
func ParseMetrics(raw []byte) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(bytes.NewReader(raw))
}

// MetricLabels returns a metric's labels as a map.
func MetricLabels(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}
