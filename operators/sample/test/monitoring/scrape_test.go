package monitoring

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"opctl.dev/opctl/internal/promtest"
	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/operators/sample/internal/controller"
	"opctl.dev/opctl/operators/sample/internal/instance"
	"opctl.dev/opctl/operators/sample/internal/instance/instancetest"
)

var (
	// braces hold label matchers, not metric names.
	labelMatchers = regexp.MustCompile(`\{[^}]*\}|"[^"]*"`)
	metricName    = regexp.MustCompile(`\b(redis|kvstore)_[a-zA-Z0-9_:]+\b`)
)

// metricsOf are the redis_ and kvstore_ metrics an expression reads.
func metricsOf(expr string) []string {
	return metricName.FindAllString(labelMatchers.ReplaceAllString(expr, " "), -1)
}

// dashboardExprs are the queries of the Grafana dashboard, its variables
// included.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Templating struct {
			List []struct {
				Query any `json:"query"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var out []string
	for _, v := range d.Templating.List {
		if q, ok := v.Query.(string); ok && strings.HasPrefix(q, "label_values(") {
			out = append(out, strings.TrimSuffix(strings.SplitN(strings.TrimPrefix(q, "label_values("), ",", 2)[0], ")"))
		}
	}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("dashboard panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	return out
}

// operatorMetrics are the names the operator registers.
func operatorMetrics() []string {
	descs := make(chan *prometheus.Desc, 64)
	for _, c := range controller.Collectors {
		c.Describe(descs)
	}
	close(descs)
	var out []string
	for d := range descs {
		if m := regexp.MustCompile(`fqName: "([^"]+)"`).FindStringSubmatch(d.String()); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// TestScrape runs a primary and a replica, an exporter in front of each
// and a Prometheus that scrapes both, and checks every metric the alerts
// and the dashboard use: an operand metric must be in the scrape, an
// operator metric must be one the operator registers. Every query must
// also evaluate in the real Prometheus.
func TestScrape(t *testing.T) {
	exporterBin := testcluster.DebianProgram(t, "prometheus-redis-exporter", "prometheus-redis-exporter")
	prometheusBin := testcluster.DebianProgram(t, "prometheus", "prometheus")
	primary := instancetest.Start(t, "", "maxmemory 64mb")
	replica := instancetest.Start(t, "", "maxmemory 64mb")
	if err := (instance.RESP{}).Follow(context.Background(), replica.Target(), "127.0.0.1", primary.Port); err != nil {
		t.Fatal(err)
	}
	var targets []string
	for _, s := range []*instancetest.Server{primary, replica} {
		addr := fmt.Sprintf("127.0.0.1:%d", instancetest.FreePort(t))
		cmd := exec.Command(exporterBin, "-redis.addr", "redis://"+s.Addr(), "-web.listen-address", addr)
		cmd.Env = append(os.Environ(), "REDIS_PASSWORD="+instancetest.Password)
		start(t, cmd)
		targets = append(targets, addr)
	}
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n- job_name: kvstore\n  static_configs:\n  - targets: [%q, %q]\n", targets[0], targets[1])
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	web := fmt.Sprintf("127.0.0.1:%d", instancetest.FreePort(t))
	start(t, exec.Command(prometheusBin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+web))
	api := "http://" + web + "/api/v1/query?query="

	// Both exporters scraped, and the replica's link up.
	waitQuery(t, api, `sum(redis_up) == 2 and on() sum(redis_master_link_up) == 1`)

	rules := promtest.Rules(t, ruleFile, dir)
	exprs := dashboardExprs(t)
	for _, r := range rules {
		exprs = append(exprs, r.Expr)
	}
	scraped, registered := map[string]bool{}, operatorMetrics()
	for _, e := range exprs {
		for _, m := range metricsOf(e) {
			switch {
			case strings.HasPrefix(m, "kvstore_"):
				if !slices.Contains(registered, m) {
					t.Errorf("%s is used in %q but the operator registers no such metric (it has %v)", m, e, registered)
				}
			case !scraped[m]:
				if n := query(t, api, fmt.Sprintf("count(%s)", m)); n == 0 {
					t.Errorf("%s is used in %q but the scrape has no such series", m, e)
				}
				scraped[m] = true
			}
		}
		// Every query runs in the real engine.
		query(t, api, strings.ReplaceAll(e, "$namespace", ".*"))
	}
	t.Logf("%d queries evaluated; operand metrics present in the scrape: %v; operator metrics registered: %v", len(exprs), slices.Sorted(maps.Keys(scraped)), registered)
	if len(scraped) < 5 {
		t.Errorf("only %d operand metrics checked", len(scraped))
	}
}

func start(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	log, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", cmd.Path, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("%s log:\n%s", filepath.Base(cmd.Path), b)
		}
	})
}

// query evaluates expr and returns the number of series in the result;
// an expression Prometheus refuses fails the test.
func query(t *testing.T, api, expr string) int {
	t.Helper()
	n, err := tryQuery(api, expr)
	if err != nil {
		t.Errorf("query %q: %v", expr, err)
	}
	return n
}

func tryQuery(api, expr string) (int, error) {
	resp, err := http.Get(api + url.QueryEscape(expr))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return 0, err
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("%s", r.Error)
	}
	return len(r.Data.Result), nil
}

func waitQuery(t *testing.T, api, expr string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		n, err := tryQuery(api, expr)
		if err == nil && n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q: still empty after 60s (%v)", expr, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
