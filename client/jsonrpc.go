package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/sse"
)

// jsonrpcTransport speaks the JSON-RPC 2.0 binding (A2A §9): every call is
// a POST of a request object to the interface URL, with numeric ids.
type jsonrpcTransport struct {
	cn  *conn
	url string
}

type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
}

// post sends one request and returns its id and the response.
func (t *jsonrpcTransport) post(ctx context.Context, o op, params any, accept, lastEventID string) (int64, *http.Response, error) {
	id := t.cn.ids.Add(1)
	body, err := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: id, Method: o.String(), Params: params})
	if err != nil {
		return 0, nil, fmt.Errorf("client: %s: encoding the request: %w", o, err)
	}
	req, err := t.cn.newRequest(ctx, http.MethodPost, t.url, bytes.NewReader(body), mediaJSON, accept)
	if err != nil {
		return 0, nil, err
	}
	if lastEventID != "" {
		req.Header.Set(headerLastEventID, lastEventID)
	}
	resp, err := t.cn.do(o.String(), req)
	return id, resp, err
}

func (t *jsonrpcTransport) call(ctx context.Context, o op, params, out any) error {
	id, resp, err := t.post(ctx, o, params, mediaJSON, "")
	if err != nil {
		return err
	}
	data, err := readBody(o.String(), resp, maxResponseBytes)
	if err != nil {
		return err
	}
	return decodeRPC(o, resp.StatusCode, data, id, out)
}

// decodeRPC reads a JSON-RPC response into out (nil to ignore the
// result). Errors keep their A2A kind; anything that is not a JSON-RPC
// response is judged by its HTTP status, or is an invalid response.
func decodeRPC(o op, httpStatus int, data []byte, id int64, out any) error {
	var r rpcResponse
	if err := json.Unmarshal(data, &r); err != nil || (r.Error == nil && r.Result == nil) {
		if httpStatus != http.StatusOK {
			return httpError(httpStatus, data)
		}
		if err == nil {
			return invalidResponse("%s: the response has neither result nor error", o)
		}
		return invalidResponseCause(err, "%s: the response is not a JSON-RPC response: %v", o, err)
	}
	if err := a2a.CheckMembers(data, &r); err != nil {
		return invalidResponseCause(err, "%s: malformed JSON-RPC response: %v", o, err)
	}
	if httpStatus != http.StatusOK && r.JSONRPC != "2.0" {
		// Not a JSON-RPC answer: something in front of the endpoint (an
		// authentication layer, a gateway) refused the request, often
		// with a google.rpc.Status body whose "error" member would
		// otherwise pass for a JSON-RPC error.
		if e, ok := statusError(httpStatus, data); ok {
			return e
		}
		return httpError(httpStatus, data)
	}
	if r.Error != nil {
		return r.Error.toA2A()
	}
	if r.JSONRPC != "2.0" {
		return invalidResponse("%s: the response's jsonrpc member is %q, want \"2.0\"", o, r.JSONRPC)
	}
	if string(bytes.TrimSpace(r.ID)) != strconv.FormatInt(id, 10) {
		return invalidResponse("%s: the response's id %s does not match the request's %d", o, r.ID, id)
	}
	if out == nil {
		return nil
	}
	if bytes.Equal(bytes.TrimSpace(r.Result), []byte("null")) {
		return invalidResponse("%s: the result is null", o)
	}
	if err := unmarshal(r.Result, out); err != nil {
		return invalidResponseCause(err, "%s: malformed result: %v", o, err)
	}
	return nil
}

func (t *jsonrpcTransport) open(ctx context.Context, o op, params any, lastEventID string) (*eventStream, error) {
	id, resp, err := t.post(ctx, o, params, mediaEventStream, lastEventID)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusOK && isEventStream(resp) {
		return newEventStream(o.String(), resp.Body, func(f sse.Event) (a2a.Event, error) {
			var sr a2a.StreamResponse
			if err := decodeRPC(o, http.StatusOK, f.Data, id, &sr); err != nil {
				return nil, err
			}
			return sr.Event, nil
		}), nil
	}
	// An error before the first event comes as a plain JSON-RPC response
	// (REQUIREMENTS R204); so might a lone result.
	data, err := readBody(o.String(), resp, maxResponseBytes)
	if err != nil {
		return nil, err
	}
	var sr a2a.StreamResponse
	if err := decodeRPC(o, resp.StatusCode, data, id, &sr); err != nil {
		return nil, err
	}
	return singleEvent(o.String(), sr.Event), nil
}
