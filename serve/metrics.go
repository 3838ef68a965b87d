package serve

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the server's Prometheus series, in a registry of its own
// (several servers can live in one process, as in tests).
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec   // endpoint, code
	latency  *prometheus.HistogramVec // endpoint
	inflight prometheus.Gauge
	batch    *prometheus.HistogramVec // model, kind
	forward  *prometheus.HistogramVec // model, kind
	queue    *prometheus.GaugeVec     // model, kind
	rejected *prometheus.CounterVec   // model, reason
	reloads  *prometheus.CounterVec   // result
	loaded   *prometheus.GaugeVec     // model, digest
	queries  *prometheus.CounterVec   // model: attack queries
	heavy    prometheus.Gauge
}

func newMetrics() *metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	m := &metrics{reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "textarmor_requests_total",
			Help: "HTTP requests answered, by endpoint and status code."}, []string{"endpoint", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "textarmor_request_duration_seconds",
			Help: "Time from a request's arrival to its answer, by endpoint.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}, []string{"endpoint"}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "textarmor_requests_in_flight", Help: "Requests being answered."}),
		batch: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "textarmor_batch_texts",
			Help:    "Texts per forward pass (micro-batches of concurrent requests), by model and kind (predict, embed).",
			Buckets: prometheus.ExponentialBuckets(1, 2, 13)}, []string{"model", "kind"}),
		forward: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "textarmor_forward_seconds",
			Help: "Time of one batched forward pass, by model and kind.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}, []string{"model", "kind"}),
		queue: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "textarmor_queue_texts",
			Help: "Texts waiting for a forward pass, by model and kind (bounded by --queue)."}, []string{"model", "kind"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "textarmor_rejected_total",
			Help: "Requests refused by a limit, by model and reason (queue_full, deadline, shutting_down, busy)."}, []string{"model", "reason"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "textarmor_reloads_total",
			Help: "Model reloads, by result (ok, failed)."}, []string{"result"}),
		loaded: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "textarmor_model_loaded_timestamp_seconds",
			Help: "When the model now served was loaded, by model and weights digest."}, []string{"model", "digest"}),
		queries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "textarmor_attack_queries_total",
			Help: "Model queries made by /v1/attack, by model."}, []string{"model"}),
		heavy: prometheus.NewGauge(prometheus.GaugeOpts{Name: "textarmor_heavy_requests",
			Help: "Explain and attack requests running or waiting for a worker (bounded by --workers plus the heavy queue)."}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.latency, m.inflight, m.batch, m.forward, m.queue, m.rejected, m.reloads, m.loaded, m.queries, m.heavy} {
		f(c)
	}
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// observe records a request's answer.
func (m *metrics) observe(endpoint string, code int, d time.Duration) {
	m.requests.WithLabelValues(endpoint, strconv.Itoa(code)).Inc()
	m.latency.WithLabelValues(endpoint).Observe(d.Seconds())
}
