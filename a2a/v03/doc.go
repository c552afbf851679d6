// Package v03 translates between A2A v0.3 and the v1.0 model of package
// a2a, in one place, so that a server can answer v0.3 clients and a client
// can call v0.3 agents without any other package knowing v0.3's shapes.
//
// It defines the v0.3 JSON of the JSON-RPC binding (also the bodies of
// v0.3 HTTP+JSON): messages, parts, tasks, the two update events, push
// configs, agent cards with their security schemes, the params of the ten
// v0.3 methods, and the error object with v0.3's codes. For each there is a
// FromV1X function, from the v1.0 type X to v0.3, and a ToV1X function
// back; [ToV1Request], [FromV1Request], [FromV1Result] and [ToV1Result]
// pick them by method. Like package a2a it does no I/O and holds no state.
// Results share maps, slices and metadata with the values they come from.
//
// # What is translated
//
// Where both versions can say a thing, translation is lossless: v1.0 → v0.3
// → v1.0 gives back the value, and v0.3 JSON → v1.0 → v0.3 gives back the
// JSON (up to what v0.3 writes in one way only, below). The differences of
// shape are v1.0's removal of the "kind" discriminator (A2A §A.2.1): v0.3
// file parts are v1.0's raw and URL parts, v0.3 roles and states are
// lower-case ("input-required"), timestamps are the same RFC 3339 strings,
// and push configs nest their webhook in pushNotificationConfig with a
// list of authentication schemes.
//
// Some things v0.3 writes one way only: a status update's final is true
// exactly for terminal and interrupted states (input-required,
// auth-required), where a v0.3 server ends the stream of a call; v0.3 →
// v1.0 does not read it. A send configuration always has blocking.
// Artifact updates always have append and lastChunk. A text or data part
// loses a media type that is its kind's default (text/plain,
// application/json), which says nothing more. Timestamps keep
// milliseconds, v1.0's precision.
//
// # What is refused
//
// What one version cannot express is an error of package a2a's kind,
// never a silent loss: UnsupportedOperation for a value that is valid but
// has no form in the other version, InvalidParams for one that is
// malformed. Either names the field in its violations. v1.0 has, and
// v0.3 lacks: ListTasks; tenants (a v0.3 peer would use the default
// tenant); paging of push configs; media types and filenames on text and
// data parts; a push config in a send that is for another task than the
// message's; API keys elsewhere than a header, query or cookie; the device
// code flow; roles and states that have no name. v0.3 has, and v1.0 lacks:
// several authentication schemes for one webhook, several OAuth flows in
// one scheme.
//
// A few v0.3 members are dropped, each where dropping is what v0.3 peers
// already do with them: the metadata of tasks/get, tasks/resubscribe and
// the push config get, list and delete params (v1.0 has no place for it;
// v0.3 servers ignore it), and a card's stateTransitionHistory (v1.0
// removed it).
//
// # Cards
//
// [FromV1AgentCard] makes a dual card: the v1.0 card's JSON with the v0.3
// members added (url, preferredTransport, additionalInterfaces,
// protocolVersion, security, the OpenAPI-like scheme members, ...), so that
// one served card is discovered by v0.3 and v1.0 clients alike; each
// version's readers ignore the other's members. [ToV1AgentCard] takes a
// dual card's v1.0 members as they are, and derives them from the v0.3
// members of a v0.3 card, with protocol version [Version] on every
// interface.
//
// # Where the JS SDK and a2a-go differ
//
// The v0.3 shapes follow the JS SDK's v0.3 types (@a2a-js/sdk 0.3.14, our
// v0.3 interop peer, and the compat layer of 1.3), checked against
// a2a-go's a2acompat/a2av0. Where those disagree:
//   - blocking absent means blocking, as JS 0.3.14's server and a2a-go
//     take it; JS 1.3's compat layer takes it as not blocking. So
//     blocking is always written.
//   - final: JS 1.3 sets it for terminal states only, a2a-go for terminal
//     and input-required; this package for terminal and both interrupted
//     states, those after which the client has to act: a v0.3 client takes
//     final as the end of the call's stream. (A v1.0 stream stays open
//     through auth-required, A2A §7.6.1; a v0.3 binding ends it where it
//     wrote final.)
//   - a role v1.0 leaves unspecified is "agent" for JS, passed on
//     unspecified by a2a-go; here it is an error.
//   - several webhook schemes: both keep the first. Several OAuth flows:
//     JS keeps the first, a2a-go refuses them. An API key location other
//     than header, query or cookie: JS writes "header", a2a-go passes it
//     on. Here all three are errors.
//   - the interfaces derived from a v0.3 card: JS and a2a-go's
//     ToV1AgentCard give the main one the card's protocolVersion (such as
//     "0.3.0") and the others "0.3", a2a-go's card parser gives all the
//     card's; JS keeps repeats, a2a-go removes them (its parser, any
//     interface at the main URL whatever its transport). Here all get
//     [Version], and an interface listed twice (same URL and transport) is
//     kept once.
//   - additionalInterfaces of a served card: a2a-go's FromV1AgentCard
//     lists the main interface again, JS and a2a-go's card producer do
//     not; nor does this package.
//   - a2a-go's own dual card nests each v1.0 security scheme under
//     "apiKey", "http", "oauth2", ... beside the v0.3 members; this
//     package uses v1.0's member names (apiKeySecurityScheme, ...), which
//     is what a v1.0 reader reads. Both read the other's v0.3 members.
//   - bad base64 in file bytes: a2a-go keeps the string's bytes, JS drops
//     the bad characters; here an error.
//
// Both SDKs wrap v1.0 data that is not an object as {"value": v} with
// metadata data_part_compat true (see [DataPartCompatKey]); so does this
// package.
package v03
