// Package otlptest is an OTLP/HTTP receiver for tests: an httptest server that decodes the
// protobuf ExportTraceServiceRequest bodies an OpenTelemetry exporter posts to /v1/traces and
// keeps the spans, flattened for assertions.
package otlptest

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span. IDs are hex; Parent is "" for a root span.
type Span struct {
	TraceID, ID, Parent string
	Name                string
	Kind                tracepb.Span_SpanKind
	Start, End          time.Time
	Attrs               map[string]any // string, int64, bool, float64 or []any
	Events              []Event
	Links               []Link
	StatusError         bool
	StatusMessage       string
	Resource            map[string]any
}

// Event is a span event.
type Event struct {
	Name  string
	Time  time.Time
	Attrs map[string]any
}

// Link is a span link.
type Link struct {
	TraceID, SpanID string
	Attrs           map[string]any
}

// Receiver collects what exporters send it. Its methods are safe for concurrent use.
type Receiver struct {
	// URL is the base address to give an exporter (the receiver answers on /v1/traces).
	URL string

	mu    sync.Mutex
	spans []Span
	bad   []string // why requests were refused
}

// NewReceiver starts a receiver, closed when the test ends. The test fails if a request the
// receiver got was not a valid OTLP/HTTP protobuf export.
func NewReceiver(tb testing.TB) *Receiver {
	tb.Helper()
	r := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	r.URL = srv.URL
	tb.Cleanup(func() {
		srv.Close()
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, why := range r.bad {
			tb.Errorf("OTLP receiver refused a request: %s", why)
		}
	})
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	refuse := func(why string) {
		r.mu.Lock()
		r.bad = append(r.bad, why)
		r.mu.Unlock()
		http.Error(w, why, http.StatusBadRequest)
	}
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		refuse(req.Method + " " + req.URL.Path + ": want POST /v1/traces")
		return
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		refuse("content type " + ct)
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		refuse(err.Error())
		return
	}
	var export coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &export); err != nil {
		refuse("decode: " + err.Error())
		return
	}
	var got []Span
	for _, rs := range export.GetResourceSpans() {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				got = append(got, flatten(s, res))
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Write(out)
}

// Spans returns a copy of the spans received so far, in the order they came.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

func flatten(s *tracepb.Span, res map[string]any) Span {
	out := Span{
		TraceID:       hex.EncodeToString(s.GetTraceId()),
		ID:            hex.EncodeToString(s.GetSpanId()),
		Parent:        hex.EncodeToString(s.GetParentSpanId()),
		Name:          s.GetName(),
		Kind:          s.GetKind(),
		Start:         time.Unix(0, int64(s.GetStartTimeUnixNano())).UTC(),
		End:           time.Unix(0, int64(s.GetEndTimeUnixNano())).UTC(),
		Attrs:         attrs(s.GetAttributes()),
		StatusError:   s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR,
		StatusMessage: s.GetStatus().GetMessage(),
		Resource:      res,
	}
	for _, e := range s.GetEvents() {
		out.Events = append(out.Events, Event{Name: e.GetName(), Time: time.Unix(0, int64(e.GetTimeUnixNano())).UTC(), Attrs: attrs(e.GetAttributes())})
	}
	for _, l := range s.GetLinks() {
		out.Links = append(out.Links, Link{TraceID: hex.EncodeToString(l.GetTraceId()), SpanID: hex.EncodeToString(l.GetSpanId()), Attrs: attrs(l.GetAttributes())})
	}
	return out
}

func attrs(kvs []*commonpb.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[kv.GetKey()] = value(kv.GetValue())
	}
	return m
}

func value(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, value(e))
		}
		return out
	}
	return nil
}
