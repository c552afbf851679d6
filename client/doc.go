// Package client calls A2A agents (A2A protocol v1.0) over the JSON-RPC
// and HTTP+JSON bindings, and over other bindings given a [Transport]
// with [WithTransport]: package client/grpcclient adds the gRPC binding that
// way, so that programs that do not use it do not depend on gRPC.
//
// [New] fetches an agent's card from its well-known URL and picks the
// interface to call by the spec's rule (A2A §8.3.2): the first entry of
// supportedInterfaces whose binding the client speaks ("JSONRPC",
// "HTTP+JSON", and those of [WithTransport]) at protocol version 1.0
// (Major.Minor compared, A2A §3.6). [WithBindings] changes the preference. The interface's tenant, when it
// has one, is put in every request (on HTTP+JSON as the /{tenant} path
// prefix); when it has none, a request's own Tenant is sent as given.
//
// Every operation is a method taking a context first and the request type
// of package a2a. Every request carries "A2A-Version: 1.0" and, with
// [WithExtensions], "A2A-Extensions". Answers are decoded leniently, as
// ProtoJSON parsers must be ([a2a.Unmarshal]). The client does not refuse
// an operation the card does not declare (A2A §3.3.4): the server answers
// with the proper error, and [Client.Follow] is where the card's
// capabilities decide what to do.
//
// # Errors
//
// An error the peer answered with is an *[a2a.Error], whichever the
// binding, so errors.Is(err, a2a.ErrTaskNotFound) and the other sentinels
// work. Its kind comes from the ErrorInfo reason first, then from the
// JSON-RPC code or, on HTTP+JSON, the google.rpc.Status name and the HTTP
// status, including the v1.0.0 statuses 409, 415 and 502 (REQUIREMENTS
// B13). A 404 that carries no A2A error is a missing route
// ([a2a.ErrMethodNotFound]), never a missing task. An answer that does not
// follow the protocol (malformed JSON, a missing result, a bad stream
// frame) is an [a2a.ErrInvalidAgentResponse].
//
// An error that is not an *a2a.Error means no answer was had: the
// connection failed, the response was cut off, the request could not be
// encoded, or the context ended (errors.Is(err, context.Canceled) then
// holds). Tell the two apart with errors.As:
//
//	var ae *a2a.Error
//	if errors.As(err, &ae) {
//		// the agent (or a proxy) said no: ae.Code says why
//	} else {
//		// the call did not complete: network, cancellation, local failure
//	}
//
// Options given bad input make [New] fail with an error wrapping
// [ErrInvalidOption]; a nil request argument is a plain error.
//
// # Streams
//
// [Client.SendStreamingMessage] and [Client.SubscribeToTask] return an
// iter.Seq2[a2a.Event, error]. The request is sent when the range loop
// starts; each event is read as the loop asks for it (nothing reads
// ahead); breaking out of the loop closes the response and cancels the
// request. An error is the last item of the sequence. The end of a stream
// is the completion signal: there is no "final" flag in v1.0.
//
// [Client.Follow] and [Client.SendAndFollow] get a task to its end whatever
// the server offers: a stream that resumes after a dropped connection with
// Last-Event-ID, de-duplication against a fresh snapshot when a server
// cannot resume, and polling with backoff when the agent does not stream.
// [Client.AllTasks] walks every page of ListTasks.
//
// # Agent cards
//
// The card is fetched without credentials. [Client.RefreshCard] honours
// Cache-Control and revalidates with If-None-Match (A2A §8.6).
// [WithCardSignatures] verifies card signatures (A2A §8.4.3) from the
// bytes received, with an *auth.CardVerifier and its trust store;
// [WithCardVerifier] is the hook for any other check.
package client
