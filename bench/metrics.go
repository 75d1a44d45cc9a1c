package main

import (
	dto "github.com/prometheus/client_model/go"

	"github.com/karmada-failover/lab/e2e/framework"
)

// webhookAdmissionFamily is the API server's histogram of time spent in admission webhooks.
const webhookAdmissionFamily = "apiserver_admission_webhook_admission_duration_seconds"

// webhookAdmissionOf sums, over the mutating webhooks' CREATE calls, the
// API server's time in them (seconds) and the number of calls.
func webhookAdmissionOf(families map[string]*dto.MetricFamily) (sum, count float64) {
	for _, m := range families[webhookAdmissionFamily].GetMetric() {
		l := framework.MetricLabels(m)
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
		l := framework.MetricLabels(m)
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
