package cli

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/goa2a/a2a/a2aotel"
)

// otelSettings are the flags of trace export.
type otelSettings struct {
	otlpEndpoint string
}

func (o *otelSettings) register(fs *flag.FlagSet) {
	fs.StringVar(&o.otlpEndpoint, "otlp-endpoint", "", "export traces over OTLP/HTTP to this `URL` (such as http://127.0.0.1:4318, or its /v1/traces path): a span per\n"+
		"A2A call, agent execution and webhook call, joined to the callers' traces (W3C traceparent). The standard\n"+
		"OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, _HEADERS and OTEL_SERVICE_NAME variables\n"+
		"work too; without either, nothing is traced")
}

// validate checks --otlp-endpoint.
func (o *otelSettings) validate() []error {
	if o.otlpEndpoint == "" {
		return nil
	}
	u, err := url.Parse(o.otlpEndpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return []error{fmt.Errorf("--otlp-endpoint %q: want an http:// or https:// URL, such as http://127.0.0.1:4318", o.otlpEndpoint)}
	}
	return nil
}

// otlpFromEnv reports whether the environment names an OTLP endpoint.
func otlpFromEnv() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// tracer is the trace export of a run: nil when nothing is traced.
type tracer struct {
	tp       *sdktrace.TracerProvider
	tracing  *a2aotel.Tracing
	endpoint string // as the banner says it
}

// newTracer exports the traces of service over OTLP/HTTP, to
// --otlp-endpoint or the endpoint of the environment; nil when neither
// is set.
func newTracer(ctx context.Context, o *otelSettings, service string) (*tracer, error) {
	if o.otlpEndpoint == "" && !otlpFromEnv() {
		return nil, nil
	}
	var opts []otlptracehttp.Option
	endpoint := "the endpoint of OTEL_EXPORTER_OTLP_*"
	if o.otlpEndpoint != "" {
		u := o.otlpEndpoint
		if p, err := url.Parse(u); err == nil && (p.Path == "" || p.Path == "/") {
			u = p.JoinPath("/v1/traces").String() // the base URL, as for the environment's endpoint
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(u))
		endpoint = u
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("--otlp-endpoint: %w", err)
	}
	// The card's name, unless OTEL_SERVICE_NAME (or
	// OTEL_RESOURCE_ATTRIBUTES) says otherwise.
	res, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName(service)), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &tracer{tp: tp, tracing: a2aotel.New(a2aotel.WithTracerProvider(tp)), endpoint: endpoint}, nil
}

// shutdown exports what is left, for up to five seconds.
func (t *tracer) shutdown() error {
	if t == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("exporting the last traces: %w", err)
	}
	return nil
}
