package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"iter"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/sse"
)

// eventStream reads the events of one streaming response. It is pulled by
// its consumer: no goroutine reads ahead.
type eventStream struct {
	op      string
	body    io.ReadCloser
	rd      *sse.Reader
	decode  func(sse.Event) (a2a.Event, error)
	pending []a2a.Event  // events of an answer that was not a stream
	src     EventStream  // the stream of a WithTransport binding, or nil
	ic      *intercepted // the stream the interceptors returned, or nil
	cancel  context.CancelFunc
}

// newEventStream reads SSE frames from body, decoding each with decode.
func newEventStream(op string, body io.ReadCloser, decode func(sse.Event) (a2a.Event, error)) *eventStream {
	return &eventStream{op: op, body: body, rd: sse.NewReader(body, maxEventBytes), decode: decode}
}

// singleEvent is a stream of one event, for a peer that answered a
// streaming call with a plain response.
func singleEvent(op string, ev a2a.Event) *eventStream {
	return &eventStream{op: op, pending: []a2a.Event{ev}}
}

// next returns the next event and its SSE id ("" if none). It returns
// io.EOF when the stream ended, a transport error when the connection
// failed, and an *a2a.Error for an error frame or a malformed one.
func (s *eventStream) next() (a2a.Event, string, error) {
	if s.ic != nil {
		return s.ic.s.Next()
	}
	if s.src != nil {
		return s.nextFrom()
	}
	if s.rd == nil {
		if len(s.pending) == 0 {
			return nil, "", io.EOF
		}
		ev := s.pending[0]
		s.pending = s.pending[1:]
		return ev, "", nil
	}
	for {
		f, err := s.rd.Next()
		switch {
		case err == io.EOF:
			return nil, "", io.EOF
		case errors.Is(err, sse.ErrEventTooLarge):
			return nil, "", invalidResponseCause(err, "%s: a stream event is larger than %d bytes", s.op, maxEventBytes)
		case err != nil:
			return nil, "", transportError(s.op, err)
		}
		if len(bytes.TrimSpace(f.Data)) == 0 {
			continue // an empty frame carries nothing; treat it as a keep-alive
		}
		ev, err := s.decode(f)
		if err != nil {
			return nil, "", err
		}
		return ev, f.ID, nil
	}
}

// retry is the reconnection delay the stream asked for ("retry:"), 0 if
// none.
func (s *eventStream) retry() time.Duration {
	if s.ic != nil {
		return s.ic.retry()
	}
	if s.rd == nil {
		return 0
	}
	return s.rd.Retry()
}

// close releases the response and cancels its request.
func (s *eventStream) close() {
	if s.ic != nil {
		_ = s.ic.s.Close()
	}
	if s.src != nil {
		_ = s.src.Close()
	}
	if s.body != nil {
		_ = s.body.Close()
	}
	if s.cancel != nil {
		s.cancel()
	}
}

// unmarshal decodes an agent's ProtoJSON into out as [a2a.Unmarshal] does
// and refuses what a strict reader would ([a2a.CheckMembers]): a member
// given twice, or matching a field only when case is ignored, reads as
// another answer to a reader that takes the first or the exact member.
func unmarshal(data []byte, out any) error {
	if err := a2a.Unmarshal(data, out); err != nil {
		return err
	}
	return a2a.CheckMembers(data, out)
}

// decodeStreamResponse decodes one StreamResponse.
func decodeStreamResponse(op string, data []byte) (a2a.Event, error) {
	var sr a2a.StreamResponse
	if err := unmarshal(data, &sr); err != nil {
		return nil, invalidResponseCause(err, "%s: malformed stream event: %v", op, err)
	}
	return sr.Event, nil
}

// open opens a stream on the binding of st, with its own cancelable
// context so that closing it ends the request.
func (c *Client) open(ctx context.Context, st *state, o op, req any, lastEventID string) (*eventStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	if c.chain != nil {
		call := c.newCall(st, o, req, lastEventID)
		is, err := c.chain.stream(ctx, call)
		if err != nil {
			cancel()
			return nil, err
		}
		return &eventStream{op: o.String(), ic: &intercepted{s: is, call: call}, cancel: cancel}, nil
	}
	s, err := st.t.open(ctx, o, req, lastEventID)
	if err != nil {
		cancel()
		return nil, err
	}
	s.cancel = cancel
	return s, nil
}

// events turns a stream into an iterator. The request, built for the
// state in use by req, is made when the iteration starts; stopping it early
// closes the response and cancels the request.
func (c *Client) events(ctx context.Context, o op, req func(*state) any) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		st := c.st()
		s, err := c.open(ctx, st, o, req(st), "")
		if err != nil {
			yield(nil, err)
			return
		}
		defer s.close()
		for {
			ev, _, err := s.next()
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}
