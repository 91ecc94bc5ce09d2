// Issue 12, item 11: /metrics is read the way Prometheus reads it, with
// the library's own text parser (expfmt), and its families are the ones
// docs/operations.md lists.

package tests

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// shScrape fetches /metrics, parses it with the Prometheus library's own
// text parser (expfmt), and flattens it back into samples ("name{labels}"
// -> value, label names in sorted order with le and quantile last: the
// order client_golang writes them) and the TYPE of each family.
func shScrape(t *testing.T, port int) (samples map[string]float64, types map[string]string, raw string) {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, b)
	}
	samples, types = map[string]float64{}, map[string]string{}
	add := func(name string, labels []*dto.LabelPair, extra string, v float64) {
		pairs := make([]string, 0, len(labels)+1)
		for _, l := range labels {
			pairs = append(pairs, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
		}
		sort.Strings(pairs)
		if extra != "" {
			pairs = append(pairs, extra)
		}
		key := name
		if len(pairs) > 0 {
			key += "{" + strings.Join(pairs, ",") + "}"
		}
		if _, dup := samples[key]; dup {
			t.Errorf("/metrics: sample %s twice", key)
		}
		samples[key] = v
	}
	bound := func(f float64) string {
		if math.IsInf(f, +1) {
			return "+Inf"
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	for name, f := range families {
		types[name] = strings.ToLower(f.GetType().String())
		for _, m := range f.GetMetric() {
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				add(name, m.Label, "", m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add(name, m.Label, "", m.GetGauge().GetValue())
			case dto.MetricType_UNTYPED:
				add(name, m.Label, "", m.GetUntyped().GetValue())
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				for _, bk := range h.GetBucket() {
					add(name+"_bucket", m.Label, fmt.Sprintf("le=%q", bound(bk.GetUpperBound())), float64(bk.GetCumulativeCount()))
				}
				add(name+"_sum", m.Label, "", h.GetSampleSum())
				add(name+"_count", m.Label, "", float64(h.GetSampleCount()))
			case dto.MetricType_SUMMARY:
				s := m.GetSummary()
				for _, q := range s.GetQuantile() {
					add(name, m.Label, fmt.Sprintf("quantile=%q", bound(q.GetQuantile())), q.GetValue())
				}
				add(name+"_sum", m.Label, "", s.GetSampleSum())
				add(name+"_count", m.Label, "", float64(s.GetSampleCount()))
			default:
				t.Fatalf("/metrics: family %s of type %v", name, f.GetType())
			}
		}
	}
	return samples, types, string(b)
}

// shMetricsDocumented checks that docs/operations.md's table lists every
// mcp_bashd_ family the daemon serves, with the type and help text it
// serves, and no family it does not serve.
func shMetricsDocumented(t *testing.T, raw string) {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(shRoot(t), "docs/operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		if m := regexp.MustCompile("^\\| `(mcp_bashd_[a-z_]+)` \\|").FindStringSubmatch(line); m != nil {
			rows[m[1]] = line
		}
	}
	for name, f := range families {
		if !strings.HasPrefix(name, "mcp_bashd_") {
			continue
		}
		row, ok := rows[name]
		if !ok {
			t.Errorf("docs/operations.md does not list %s", name)
			continue
		}
		delete(rows, name)
		typ := strings.ToLower(f.GetType().String())
		if !strings.Contains(row, "| "+typ+" |") || !strings.HasSuffix(row, "| "+f.GetHelp()+" |") {
			t.Errorf("docs/operations.md: %s is served as %s %q; the doc says:\n%s", name, typ, f.GetHelp(), row)
		}
	}
	for name := range rows {
		t.Errorf("docs/operations.md lists %s, which /metrics does not serve", name)
	}
}
