// Package semcases reads api/testdata/cases.json, the semantics table that
// the Go client, the HTTP/JSON API, and the Python and Java clients each
// run against a real cairn lite, so that an operation means the same in
// every language. The file's comment says how to read a case; this package
// only decodes it and offers the helpers every Go runner needs (the run
// tag, the value of a step, the depth names).
//
// It is test support: nothing in the server or the client imports it.
// Everything here is a pure function or a value, safe for concurrent use.
package semcases
