package metrics

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape GETs /metrics from h and parses it with the library's own text
// parser.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// labels of one series as a map.
func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func TestScrapeParsesWithExpfmt(t *testing.T) {
	m := New()
	var kills atomic.Uint64
	kills.Store(3)
	h := Handler(m, func() bool { return false }, []Counter{
		{Name: "mcp_bashd_group_kills_total", Help: "Groups killed.", Value: kills.Load},
	})

	// Before any call: the labelled families have no series; the gauge
	// and the extra counter are there at 0 and 3.
	fams := scrape(t, h)
	if _, ok := fams["mcp_bashd_tool_calls_total"]; ok {
		t.Error("mcp_bashd_tool_calls_total has series before any call")
	}
	if g := fams["mcp_bashd_tool_calls_in_flight"]; g == nil || g.GetType() != dto.MetricType_GAUGE || g.Metric[0].GetGauge().GetValue() != 0 {
		t.Errorf("in flight before any call: %v", g)
	}
	if c := fams["mcp_bashd_group_kills_total"]; c == nil || c.GetType() != dto.MetricType_COUNTER || c.GetHelp() != "Groups killed." || c.Metric[0].GetCounter().GetValue() != 3 {
		t.Errorf("extra counter: %v", c)
	}
	// The library's process and Go collectors sit beside ours.
	for _, name := range []string{"process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "go_goroutines", "go_info", "go_gc_duration_seconds"} {
		if fams[name] == nil {
			t.Errorf("%s missing", name)
		}
	}

	m.Start()
	m.Start()
	m.Finish("greet", "ok", 3*time.Millisecond)
	m.Rejected("greet")
	m.Finish("bad\xffname", "error", 2*time.Second)
	m.Start()
	fams = scrape(t, h)
	if g := fams["mcp_bashd_tool_calls_in_flight"].Metric[0].GetGauge().GetValue(); g != 1 {
		t.Errorf("in flight = %v, want 1", g)
	}
	calls := map[[2]string]float64{}
	for _, s := range fams["mcp_bashd_tool_calls_total"].GetMetric() {
		l := labels(s)
		calls[[2]string{l["tool"], l["outcome"]}] = s.GetCounter().GetValue()
	}
	want := map[[2]string]float64{{"greet", "ok"}: 1, {"greet", "rejected"}: 1, {"bad\uFFFDname", "error"}: 1}
	if len(calls) != len(want) {
		t.Errorf("calls %v, want %v", calls, want)
	}
	for k, v := range want {
		if calls[k] != v {
			t.Errorf("calls%v = %v, want %v", k, calls[k], v)
		}
	}
	hist := fams["mcp_bashd_tool_call_duration_seconds"]
	if hist.GetType() != dto.MetricType_HISTOGRAM || len(hist.Metric) != 2 {
		t.Fatalf("histogram: %v", hist)
	}
	for _, s := range hist.Metric {
		h := s.GetHistogram()
		if h.GetSampleCount() != 1 {
			t.Errorf("%v: count %d, want 1 (a rejected call never ran)", labels(s), h.GetSampleCount())
		}
		// The first bucket that holds the call: 5 ms for 3 ms, 2.5 s for 2 s.
		wantLe := map[string]float64{"greet": 0.005, "bad\uFFFDname": 2.5}[labels(s)["tool"]]
		for _, b := range h.GetBucket() {
			if in := b.GetCumulativeCount() == 1; in != (b.GetUpperBound() >= wantLe) {
				t.Errorf("%v: bucket le=%v holds %d", labels(s), b.GetUpperBound(), b.GetCumulativeCount())
			}
		}
	}
}

func TestHealthz(t *testing.T) {
	var stopping atomic.Bool
	h := Handler(New(), stopping.Load, nil)
	get := func() (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		b, _ := io.ReadAll(rec.Body)
		return rec.Code, string(b)
	}
	if code, body := get(); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	stopping.Store(true)
	if code, _ := get(); code != http.StatusServiceUnavailable {
		t.Errorf("/healthz while stopping: %d, want 503", code)
	}
}

// Two handlers over one Metrics (or two daemons in one process) do not
// collide: each has its own registry.
func TestHandlersHaveTheirOwnRegistry(t *testing.T) {
	m := New()
	Handler(m, func() bool { return false }, nil)
	Handler(m, func() bool { return false }, nil)
	Handler(New(), func() bool { return false }, nil)
}

// A failing check (the --state store's ping) makes /healthz 503 with its
// error; once it passes again, ok.
func TestHealthzCheck(t *testing.T) {
	var down atomic.Bool
	check := func(context.Context) error {
		if down.Load() {
			return errors.New("state store unavailable: connection refused")
		}
		return nil
	}
	h := Handler(New(), func() bool { return false }, nil, check)
	get := func() (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := get(); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	down.Store(true)
	if code, body := get(); code != http.StatusServiceUnavailable || !strings.Contains(body, "state store unavailable") {
		t.Errorf("/healthz with the store down: %d %q", code, body)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/livez", nil))
	if rec.Code != 200 || rec.Body.String() != "ok\n" {
		t.Errorf("/livez with the store down: %d %q, want 200 ok", rec.Code, rec.Body.String())
	}
	down.Store(false)
	if code, _ := get(); code != 200 {
		t.Errorf("/healthz once the store is back: %d", code)
	}
}
