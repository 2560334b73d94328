// Package model is a naive, in-memory model of Cairn's KV service for
// differential tests: the same random requests go to a real node and to a
// Model, and every response is compared with what the Model says it must be.
//
// The Model is a map from a key's string form (keys.Key.String) to a Record.
// It implements the wire contract of api/cairnpb/kv.proto as plainly as it
// can (linear scans, a cloned map per execute) and shares no code with
// internal/storage or internal/server; it uses package keys only for the Key
// type and its string form.
//
// # What the Model cannot predict
//
// Versions are opaque: a Model cannot know the bytes a server will assign.
// Every write therefore takes the versions the server returned and records
// them; conditions (IF_VERSION) and reads are then compared against those.
//
// Expiration times are the server's clock plus the TTL, and the Model knows
// the server's clock only to within the duration of the call (a Clock). A
// Record therefore holds an Expiry interval, which Observe narrows to the
// exact value once a response has shown it. Records never expire in the
// Model: tests must use TTLs far longer than the test.
//
// # Semantics modelled
//
//   - put: conditions IF_ABSENT, IF_PRESENT, IF_VERSION (or none); the
//     previous record is returned when the ReturnValueVersion asks for
//     anything and the record existed, whether or not the put succeeded.
//   - delete: Success means the record existed (and, with IF_VERSION, had
//     that version).
//   - execute: operations run in order, each seeing its predecessors'
//     effects; if one with abort_if_unsuccessful fails, nothing is written.
//   - multiDelete, multiGet: records of exactly the parent's major path whose
//     full path is selected by (parent, range, depth); multiGet orders them by
//     minor path, component by component.
//   - storeScan: records whose major path extends the parent's (possibly
//     partial or empty) major path and whose full path is selected by
//     (parent, range, depth); a non-full range applies to the major component
//     right after the parent, so it excludes records whose major path is the
//     parent itself. Order is unspecified; StoreScan returns key order.
//
// # Concurrency
//
// A Model is not safe for concurrent use; give each goroutine its own.
//
// # Example
//
//	m := model.New()
//	resp, _ := kv.Put(ctx, &cairnpb.PutRequest{Op: op})
//	want := m.Put(op, clock, resp.GetResult().GetNewVersion())
//	if err := model.CheckResult(resp.GetResult(), want); err != nil {
//		t.Fatal(err)
//	}
package model
