package main

import (
	"bytes"
	"context"
	"fmt"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/karmada-failover/lab/e2e/framework"
)

// scrapeMetrics reads an API server's /metrics, parsed by Prometheus' text
// format parser, keyed by metric family name.
func scrapeMetrics(ctx context.Context, k *framework.ClusterProxy) (map[string]*dto.MetricFamily, error) {
	raw, err := k.Kube().CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s /metrics: %w", k.Name, err)
	}
	families, err := parseMetrics(raw)
	if err != nil {
		return nil, fmt.Errorf("%s /metrics: %w", k.Name, err)
	}
	return families, nil
}

// parseMetrics parses Prometheus' text exposition format.
func parseMetrics(raw []byte) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(bytes.NewReader(raw))
}

// labels returns a metric's labels as a map.
func labels(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// webhookAdmissionFamily is the API server's histogram of time spent in admission webhooks.
const webhookAdmissionFamily = "apiserver_admission_webhook_admission_duration_seconds"

// webhookAdmissionOf sums, over the mutating webhooks' CREATE calls, the
// API server's time in them (seconds) and the number of calls.
func webhookAdmissionOf(families map[string]*dto.MetricFamily) (sum, count float64) {
	for _, m := range families[webhookAdmissionFamily].GetMetric() {
		l := labels(m)
		if l["operation"] != "CREATE" || l["type"] != "admit" {
			continue
		}
		sum += m.GetHistogram().GetSampleSum()
		count += float64(m.GetHistogram().GetSampleCount())
	}
	return sum, count
}

// requestsFamily is the API server's counter of requests.
const requestsFamily = "apiserver_request_total"

// apiRequestsOf returns the request counters but watches, keyed "VERB
// resource[/subresource]".
func apiRequestsOf(families map[string]*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, m := range families[requestsFamily].GetMetric() {
		l := labels(m)
		if l["verb"] == "WATCH" {
			continue
		}
		res := l["resource"]
		if l["subresource"] != "" {
			res += "/" + l["subresource"]
		}
		out[l["verb"]+" "+res] += m.GetCounter().GetValue()
	}
	return out
}
