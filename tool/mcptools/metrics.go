package mcptools

import (
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/paigasus/helikon"
)

// Metrics are the Prometheus metrics of an MCP server: give the same
// Metrics to [ServerOptions].Metrics (calls and decisions) and to
// [HTTPOptions].Metrics (sessions, and the /metrics endpoint). A nil
// *Metrics records nothing. The metrics are:
//
//	helikon_mcp_sessions_open                       gauge: live HTTP sessions
//	helikon_mcp_calls_total{tool,outcome}           counter: finished calls; outcome ok, invalid_args, denied, other or input_required
//	helikon_mcp_calls_running{tool}                 gauge: calls running now (for Bash: commands running)
//	helikon_mcp_decisions_total{stage,decision}     counter: permission decisions; stage is the pipeline step that decided
//	                                                (deny_rule, guard, ask_rule, allow_rule, mode, policy, approval), decision allow or deny
//
// Arguments, outputs and session ids are never labels: they may hold
// secrets, and session ids would make the series unbounded.
type Metrics struct {
	reg       *prometheus.Registry
	sessions  prometheus.Gauge
	calls     *prometheus.CounterVec
	running   *prometheus.GaugeVec
	decisions *prometheus.CounterVec
}

// NewMetrics returns metrics on a registry of their own, which also holds
// the Go runtime's and the process's collectors.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		sessions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "helikon_mcp_sessions_open", Help: "Live MCP sessions of the streamable HTTP transport.",
		}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "helikon_mcp_calls_total", Help: "Finished MCP tool calls, by tool and outcome (ok, invalid_args, denied, other, input_required).",
		}, []string{"tool", "outcome"}),
		running: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "helikon_mcp_calls_running", Help: "MCP tool calls running now, by tool (for Bash: the commands running).",
		}, []string{"tool"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "helikon_mcp_decisions_total", Help: "Permission decisions on MCP tool calls, by the pipeline stage that decided and the decision (allow, deny).",
		}, []string{"stage", "decision"}),
	}
	m.reg.MustRegister(m.sessions, m.calls, m.running, m.decisions,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry returns the registry the metrics are on, for an application
// that adds its own or serves them elsewhere.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler returns the handler serving the metrics in the Prometheus
// exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// callStarted counts a call of tool as running; the returned function ends
// it with its outcome.
func (m *Metrics) callStarted(tool string) (done func(outcome string)) {
	if m == nil {
		return func(string) {}
	}
	g := m.running.WithLabelValues(tool)
	g.Inc()
	return func(outcome string) {
		g.Dec()
		m.calls.WithLabelValues(tool, outcome).Inc()
	}
}

// decided counts the permission decision of a call: d when the pipeline
// decided, or the denial err carries.
func (m *Metrics) decided(d helikon.Decision, err error) {
	if m == nil {
		return
	}
	stage, decision := d.Stage, "allow"
	if err != nil || !d.Allowed {
		decision = "deny"
		var de *helikon.DeniedError
		if !errors.As(err, &de) && err != nil {
			return // not a decision: the call failed before one
		}
	}
	if stage == "" {
		stage = "none"
	}
	m.decisions.WithLabelValues(string(stage), decision).Inc()
}

// sessionOpened and sessionClosed count the live HTTP sessions.
func (m *Metrics) sessionOpened() {
	if m != nil {
		m.sessions.Inc()
	}
}

func (m *Metrics) sessionClosed() {
	if m != nil {
		m.sessions.Dec()
	}
}
