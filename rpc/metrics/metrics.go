// Package metrics counts tool calls and renders them, with the
// supervisor's process counters, as Prometheus text for /metrics; it also
// serves /healthz. It imports nothing of this module: the server records
// into it and the command line wires the supervisor's counters in.
package metrics

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Metrics counts calls for the Prometheus text endpoint. Outcomes: ok,
// error (isError), rejected (arguments refused by validation), cancelled,
// timeout. Unknown tool names are not counted: a client must not be able to
// create series at will.
type Metrics struct {
	mu       sync.Mutex
	calls    map[[2]string]uint64 // {tool, outcome}
	buckets  []float64            // upper bounds, seconds
	hist     map[string][]uint64  // tool -> cumulative-at-render counts per bucket (+Inf last)
	sum      map[string]float64
	count    map[string]uint64
	inFlight int64
}

// New is an empty set of counters.
func New() *Metrics {
	return &Metrics{
		calls:   map[[2]string]uint64{},
		buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		hist:    map[string][]uint64{},
		sum:     map[string]float64{},
		count:   map[string]uint64{},
	}
}

// Start counts a call that took a concurrency slot.
func (m *Metrics) Start() {
	m.mu.Lock()
	m.inFlight++
	m.mu.Unlock()
}

// Finish counts a call that ended with outcome (ok, error, cancelled,
// timeout) after d.
func (m *Metrics) Finish(tool, outcome string, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inFlight--
	m.calls[[2]string{tool, outcome}]++
	h := m.hist[tool]
	if h == nil {
		h = make([]uint64, len(m.buckets)+1)
		m.hist[tool] = h
	}
	sec := d.Seconds()
	i := sort.SearchFloat64s(m.buckets, sec)
	h[i]++
	m.sum[tool] += sec
	m.count[tool]++
}

// Rejected counts a call whose arguments validation refused.
func (m *Metrics) Rejected(tool string) {
	m.mu.Lock()
	m.calls[[2]string{tool, "rejected"}]++
	m.mu.Unlock()
}

// WriteText writes the Prometheus text exposition format.
func (m *Metrics) WriteText(w io.Writer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fmt.Fprintln(w, "# HELP mcp_bashd_tool_calls_total Tool calls by tool and outcome.")
	fmt.Fprintln(w, "# TYPE mcp_bashd_tool_calls_total counter")
	keys := make([][2]string, 0, len(m.calls))
	for k := range m.calls {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	for _, k := range keys {
		fmt.Fprintf(w, "mcp_bashd_tool_calls_total{tool=%q,outcome=%q} %d\n", label(k[0]), k[1], m.calls[k])
	}
	fmt.Fprintln(w, "# HELP mcp_bashd_tool_call_duration_seconds Tool call duration.")
	fmt.Fprintln(w, "# TYPE mcp_bashd_tool_call_duration_seconds histogram")
	tools := make([]string, 0, len(m.hist))
	for t := range m.hist {
		tools = append(tools, t)
	}
	sort.Strings(tools)
	for _, t := range tools {
		var cum uint64
		for i, b := range m.buckets {
			cum += m.hist[t][i]
			fmt.Fprintf(w, "mcp_bashd_tool_call_duration_seconds_bucket{tool=%q,le=%q} %d\n", label(t), trimFloat(b), cum)
		}
		cum += m.hist[t][len(m.buckets)]
		fmt.Fprintf(w, "mcp_bashd_tool_call_duration_seconds_bucket{tool=%q,le=\"+Inf\"} %d\n", label(t), cum)
		fmt.Fprintf(w, "mcp_bashd_tool_call_duration_seconds_sum{tool=%q} %g\n", label(t), m.sum[t])
		fmt.Fprintf(w, "mcp_bashd_tool_call_duration_seconds_count{tool=%q} %d\n", label(t), m.count[t])
	}
	fmt.Fprintln(w, "# HELP mcp_bashd_tool_calls_in_flight Tool calls running (holding a concurrency slot).")
	fmt.Fprintln(w, "# TYPE mcp_bashd_tool_calls_in_flight gauge")
	fmt.Fprintf(w, "mcp_bashd_tool_calls_in_flight %d\n", m.inFlight)
}

func label(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

func trimFloat(f float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", f), "0"), ".")
}

// Counter is one counter kept elsewhere (the supervisor's), rendered with
// its help text.
type Counter struct {
	Name, Help string
	Value      func() uint64
}

// Handler serves /metrics (m, then the extra counters) and /healthz (503
// while stopping).
func Handler(m *Metrics, stopping func() bool, extra []Counter) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		m.WriteText(w)
		for _, c := range extra {
			fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n%s %d\n", c.Name, c.Help, c.Name, c.Name, c.Value())
		}
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if stopping() {
			http.Error(w, "stopping", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok\n")
	})
	return mux
}
