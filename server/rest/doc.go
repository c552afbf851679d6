// Package rest is the HTTP+JSON binding of A2A (A2A §11): resource URLs such
// as POST /message:send and GET /tasks/{id}, ProtoJSON bodies with
// Content-Type application/a2a+json, errors as google.rpc.Status JSON, and
// streams as Server-Sent Events whose frames are bare StreamResponse
// objects.
//
// The binding maps wire shapes and error codes only; every protocol rule is
// in [server.Handler].
//
// # Mounting
//
// A [Handler] serves paths relative to where it is mounted, which is the
// URL the agent card declares for its "HTTP+JSON" interface. Mount it under
// a prefix with [http.StripPrefix]:
//
//	mux.Handle("/a2a/rest/", http.StripPrefix("/a2a/rest", rest.NewHandler(h)))
//
// # Routes
//
// Each route also exists with a /{tenant} prefix, which sets the request's
// tenant (A2A §11.3, proto additional_bindings):
//
//	SendMessage                       POST   /message:send
//	SendStreamingMessage (SSE)        POST   /message:stream
//	GetTask                           GET    /tasks/{id}?historyLength=
//	ListTasks                         GET    /tasks?contextId=&status=&pageSize=&pageToken=
//	                                         &historyLength=&statusTimestampAfter=&includeArtifacts=
//	CancelTask                        POST   /tasks/{id}:cancel
//	SubscribeToTask (SSE)             GET or POST /tasks/{id}:subscribe
//	CreateTaskPushNotificationConfig  POST   /tasks/{taskId}/pushNotificationConfigs
//	GetTaskPushNotificationConfig     GET    /tasks/{taskId}/pushNotificationConfigs/{configId}
//	ListTaskPushNotificationConfigs   GET    /tasks/{taskId}/pushNotificationConfigs?pageSize=&pageToken=
//	DeleteTaskPushNotificationConfig  DELETE /tasks/{taskId}/pushNotificationConfigs/{configId}
//	GetExtendedAgentCard              GET    /extendedAgentCard
//
// Path values are percent-decoded. A colon that is part of a task id must be
// sent as %3A, since a literal ":cancel" or ":subscribe" at the end of the id
// segment is the custom verb; literals are matched before decoding, so an
// escaped character is always data. A path with an empty segment, such as
// "/tasks/", matches no route.
//
// Routing looks at the path alone, never the method, and reads a path of
// two or more segments as /{tenant}/... first: when the rest of it is a
// route, its first segment is the tenant; otherwise the whole path must be
// a route, without a tenant (REQUIREMENTS B11). A path is ambiguous only
// when its first segment is "tasks" and the rest is itself a route, as in
// /tasks/tasks or /tasks/extendedAgentCard; it then names a route of tenant
// "tasks", never a task whose id is a reserved word ("tasks",
// "message:send", "message:stream", "extendedAgentCard"). So a tenant may be
// named anything, while such task ids are not reachable on every route
// without a tenant; the default id generator (UUIDs) never makes them.
//
// # Requests
//
// POST bodies are the ProtoJSON of the request message (A2A §11.4). Their
// Content-Type, when given, must be application/a2a+json or
// application/json (REQUIREMENTS R209); any other is answered with 400 and an
// InvalidRequest error naming it, rather than 415, because the A2A error
// table reserves ContentTypeNotSupportedError for message parts. The body of
// CancelTask may be empty or {}; the body of a POST to :subscribe is
// ignored. A field that the path also carries (tenant, the task id) may be
// omitted from the body; when both are given they must agree, or the answer
// is InvalidParams. A tenant in the body of a request whose path has none is
// used, as gRPC transcoding does.
//
// Query parameters (A2A §11.5) have camelCase names; numbers are decimal,
// booleans "true" or "false", task states enum names such as
// TASK_STATE_WORKING, and timestamps RFC 3339. A malformed or repeated
// value, or an empty one where a number, boolean, state or timestamp is
// expected, is answered with InvalidParams naming the parameter. Unknown
// parameters are ignored. Omitted optional numbers stay unset:
// historyLength absent means the server's default, historyLength=0 means no
// history. Range checks (a negative historyLength, pageSize outside 1–100)
// are the Handler's.
//
// The A2A service parameters are read from headers, and A2A-Version also
// from the query (A2A §3.6.1).
//
// # Responses
//
// Success is 200 with Content-Type application/a2a+json (A2A §11.1), also
// for Create (not 201) and Delete, whose body is {} (REQUIREMENTS B6).
// Errors carry the HTTP status of their code and the body
//
//	{"error":{"code":404,"status":"NOT_FOUND","message":"Task not found",
//	  "details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo",
//	    "reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"…"}}]}}
//
// (A2A §11.6). An unknown path is 404 and a known path with an unsupported
// method is 405 with an Allow header, both with that body and the
// MethodNotFound kind (status UNIMPLEMENTED). A body that is not JSON is 400
// with the ParseError kind; one over the size limit is refused with 413
// before it is decoded.
//
// Streams answer 200 with Content-Type text/event-stream; each frame is one
// "data:" line holding a StreamResponse such as {"statusUpdate":{…}}, with
// an "id:" line ("taskId:seq") that a client can send back as
// Last-Event-ID to resume (A2A §11.7). An error found before the first frame
// is an ordinary error response; one found later is sent as a last frame
// with "event: error" and the error body as data, and the stream ends
// (REQUIREMENTS B2). That event type is what the official JavaScript SDK
// sends and expects.
package rest
