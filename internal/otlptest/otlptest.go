// Package otlptest is an OTLP/HTTP trace receiver for tests: it decodes
// the real OTLP protobuf that exporters send, on 127.0.0.1, and keeps the
// spans.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is a received span, as tests look at it.
type Span struct {
	Service  string // the resource's service.name
	Name     string
	Kind     tracepb.Span_SpanKind
	TraceID  string // hex
	SpanID   string // hex
	ParentID string // hex, "" for a root
	Attrs    map[string]string
	Events   []string // the span events' names
	Error    bool     // status code ERROR
}

// Receiver is an OTLP/HTTP endpoint (POST /v1/traces).
type Receiver struct {
	srv *httptest.Server
	t   *testing.T

	mu    sync.Mutex
	spans []Span
}

// New starts a receiver on 127.0.0.1, closed when the test ends.
func New(t *testing.T) *Receiver {
	r := &Receiver{t: t}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

// URL is the traces endpoint, for otlptracehttp.WithEndpointURL or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT.
func (r *Receiver) URL() string { return r.srv.URL + "/v1/traces" }

// BaseURL is the endpoint's base, for OTEL_EXPORTER_OTLP_ENDPOINT.
func (r *Receiver) BaseURL() string { return r.srv.URL }

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.Error(w, "not an OTLP traces endpoint", http.StatusNotFound)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = gz
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		r.t.Errorf("otlptest: Content-Type %q, want application/x-protobuf", ct)
	}
	var msg coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(data, &msg); err != nil {
		r.t.Errorf("otlptest: the body is not an ExportTraceServiceRequest: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	for _, rs := range msg.ResourceSpans {
		service := attrs(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				sp := Span{Service: service, Name: s.Name, Kind: s.Kind, TraceID: hex.EncodeToString(s.TraceId),
					SpanID: hex.EncodeToString(s.SpanId), ParentID: hex.EncodeToString(s.ParentSpanId),
					Attrs: attrs(s.Attributes), Error: s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR}
				for _, e := range s.Events {
					sp.Events = append(sp.Events, e.Name)
				}
				r.spans = append(r.spans, sp)
			}
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = x.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.Key] = strconv.FormatInt(x.IntValue, 10)
		case *commonpb.AnyValue_BoolValue:
			if x.BoolValue {
				m[kv.Key] = "true"
			} else {
				m[kv.Key] = "false"
			}
		default:
			m[kv.Key] = v.String()
		}
	}
	return m
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// WaitFor waits until ok holds for the spans received, for up to a minute.
func (r *Receiver) WaitFor(t *testing.T, what string, ok func([]Span) bool) []Span {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		spans := r.Spans()
		if ok(spans) {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute; spans received:\n%v", what, spans)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
