package metrics

import (
	"context"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics counts calls. Outcomes: ok, error (isError), rejected (arguments
// refused by validation), cancelled, timeout.
type Metrics struct {
	calls    *prometheus.CounterVec   // {tool, outcome}
	duration *prometheus.HistogramVec // {tool}
	inFlight prometheus.Gauge
}

// New is an empty set of counters.
func New() *Metrics {
	return &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcp_bashd_tool_calls_total",
			Help: "Tool calls by tool and outcome.",
		}, []string{"tool", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcp_bashd_tool_call_duration_seconds",
			Help:    "Tool call duration.",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"tool"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcp_bashd_tool_calls_in_flight",
			Help: "Tool calls running (holding a concurrency slot).",
		}),
	}
}

// Start counts a call that took a concurrency slot.
func (m *Metrics) Start() { m.inFlight.Inc() }

// Finish counts a call that ended with outcome (ok, error, cancelled,
// timeout) after d.
func (m *Metrics) Finish(tool, outcome string, d time.Duration) {
	m.inFlight.Dec()
	tool = label(tool)
	m.calls.WithLabelValues(tool, outcome).Inc()
	m.duration.WithLabelValues(tool).Observe(d.Seconds())
}

// Rejected counts a call whose arguments validation refused.
func (m *Metrics) Rejected(tool string) {
	m.calls.WithLabelValues(label(tool), "rejected").Inc()
}

// label makes a tool name a valid label value: client_golang panics on
// invalid UTF-8. Names come from decoded JSON, which is valid UTF-8, so
// this only keeps a future source of names from crashing a call.
func label(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// Counter is one counter kept elsewhere (the supervisor's), exposed with
// its help text.
type Counter struct {
	Name, Help string
	Value      func() uint64
}

// Handler serves /metrics, /healthz (503 while stopping) and /livez. /metrics
// exposes m, the extra counters, and the process and Go runtime
// collectors, from a registry of its own (so two daemons in one test
// process, or two handlers, never share series).
//
// Each of checks (the --state store's ping) must pass for /healthz to say
// ok; a failing one answers 503 naming it, so a load balancer takes the
// replica out while its shared store is unreachable. /livez answers ok
// whatever the checks say, for a liveness probe: a replica waiting for its
// store is not helped by a restart, and restarting every replica at once
// while Redis is down would stop even what needs no store.
func Handler(m *Metrics, stopping func() bool, extra []Counter, checks ...func(context.Context) error) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(m.calls, m.duration, m.inFlight,
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector())
	for _, c := range extra {
		value := c.Value
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: c.Name, Help: c.Help},
			func() float64 { return float64(value()) }))
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if stopping() {
			http.Error(w, "stopping", http.StatusServiceUnavailable)
			return
		}
		for _, check := range checks {
			ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
			err := check(ctx)
			cancel()
			if err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("/livez", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	return mux
}
