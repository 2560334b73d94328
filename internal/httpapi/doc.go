// Package httpapi serves Cairn's KV API as HTTP/JSON, on the node's one
// port beside gRPC (the node splits the listener by protocol: HTTP/1.x
// comes here, HTTP/2 goes to gRPC; see docs/design/20261127_every_language.md).
//
// A key travels in its string form as the URL path, the same form
// `cairn kv` and every client print (components escaped as %XX where
// needed, "-" between the major and the minor path):
//
//	GET    /v1/kv/users/alice/-/email          get       ?consistency=
//	PUT    /v1/kv/users/alice/-/email          put       body: the value's bytes;
//	                                                     ?if=absent|present|version=HEX &ttl=1h
//	                                                     &durability=sync|write_no_sync|no_sync &ack=
//	DELETE /v1/kv/users/alice/-/email          delete    ?if=version=HEX
//	GET    /v1/multi/users/alice               multiGet  ?depth= &start= &end= &prefix= &keys_only=true
//	DELETE /v1/multi/users/alice               multiDelete (same selection)
//	POST   /v1/execute                         execute   {"operations": [{"op": "put", "key": ..., "value": ...}, ...]}
//	GET    /v1/scan?parent=/users&limit=100    one page of a store scan, and the cursor of the next
//	GET    /v1/store                           the store's name, partitions, topology seq and limits
//	POST   /v1/login                           a secure store's session token: {"user": ..., "password": ...}
//	GET    /openapi.json                       the OpenAPI 3.1 document (openapi.json here)
//
// The key is read from the request line as sent, so %2F and %2D stay
// inside their component. The string form leaves some characters as they
// are that a URL gives a meaning: in a URL, write '?' as %3F, '#' as %23
// and a space as %20, and a component that is "." or ".." as %2E or %2E%2E
// (HTTP clients and browsers remove dot segments from a path before they
// send it). The node decodes any %XX in a component.
//
// A '%' in the URL starts an escape of two hex digits; write '%' itself as
// %25. A path with a malformed escape (GET /v1/kv/a%zz) is refused by Go's
// HTTP server while it parses the request line, before any handler runs:
// the answer is net/http's own "400 Bad Request" in plain text, with
// Connection: close, not the JSON error below (the handler never sees the
// request, so it cannot word it). A malformed escape in the query
// (?if=absent%zz), or a ';' between parameters, is refused by the handler
// with a JSON 400 of kind bad_request naming it, before anything else:
// net/url would drop that parameter without a word.
//
// On a secure node a request carries "Authorization: Bearer TOKEN" (from
// POST /v1/login) or Basic credentials (auth.go); the node checks the
// token and the user's role, and refuses a request without one (401).
//
// Every request may carry ?timeout=DURATION. A record comes back as the
// JSON `cairn kv -json` prints (internal/cli RecordJSON): "value" for a
// UTF-8 value, "value_base64" for any other, "version" in hex. A failure
// is {"error": {...}} with the kind, the action (RETRY, REFRESH,
// FIX_INPUT, NONE) and the message a gRPC caller gets, under the HTTP
// status that fits its code; a write whose outcome is unknown says
// "maybe_applied": true.
//
// Routing: the handler runs every request through a smart client (package
// client) opened on the node itself, so any node accepts any request and
// it reaches the shard's leader or a replica by the client's rules,
// retried only where it certainly was not applied. The handler is safe for
// concurrent use; it keeps no state of its own.
package httpapi
