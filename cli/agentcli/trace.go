package agentcli

import (
	"context"
	"fmt"
	"strings"

	"github.com/paigasus/helikon/cli"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Tracing is off unless one of the standard OpenTelemetry variables names an
// OTLP/HTTP collector; then spans of agent runs, model calls and tool
// executions (GenAI semantic conventions) are exported there.
const (
	otlpTracesEndpointEnv = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" // full URL, e.g. http://localhost:4318/v1/traces
	otlpEndpointEnv       = "OTEL_EXPORTER_OTLP_ENDPOINT"        // base URL; /v1/traces is appended
)

// setupTracing returns the tracer to run with (nil when tracing is off) and a
// function that flushes and stops the exporter.
func setupTracing(ctx context.Context, env *cli.Env) (trace.Tracer, func(context.Context) error, error) {
	var opt otlptracehttp.Option
	switch {
	case env.Var(otlpTracesEndpointEnv) != "":
		opt = otlptracehttp.WithEndpointURL(env.Var(otlpTracesEndpointEnv))
	case env.Var(otlpEndpointEnv) != "":
		opt = otlptracehttp.WithEndpointURL(strings.TrimRight(env.Var(otlpEndpointEnv), "/") + "/v1/traces")
	default:
		return nil, func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx, opt)
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: %w", err)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "helikon"))),
	)
	return tp.Tracer("github.com/paigasus/helikon"), tp.Shutdown, nil
}
