// Package console is Cairn's web console: read-only pages, served by every
// storage node on its one port (beside the HTTP/JSON API), that show what
// `cairn admin` shows in pieces. The design is
// docs/design/20261129_web_console.md.
//
//	GET /console              the page: the store, its storage nodes, shards and
//	                          replicas, verify configuration's findings, the plans
//	                          and the last events; it polls state.json every 2 s
//	GET /console/state.json   the data the page draws (State)
//
// # Where the data comes from
//
// Every figure on the page is an admin command's own JSON reply: ping,
// verify configuration, show topology, show plans (cut to the plans not yet
// ended and the newest 12) and show events -last 20. The node runs them
// through Source, as its admin RPC runs a shell's commands: on its admin
// replica, forwarded to the admin leader, or, when the admins have no
// leader, from this node's copy of the metadata with a note saying so.
//
// # Invariants
//
//   - Read-only: no route changes anything; Source is asked only for the
//     commands above, which need role readonly.
//   - Nothing on the page comes from outside the node: its one HTML file
//     holds its style and script (go:embed), and its Content-Security-Policy
//     lets it load nothing else and reach only this node.
//   - No string from the store reaches the DOM as markup: the script sets
//     textContent only, and the first state, placed in the page, is JSON
//     whose '<', '>' and '&' are escaped, so it cannot close its block.
//   - The console never holds the port: each state is bounded by
//     StateTimeout, and a command with no answer by then shows as an
//     error in its own section.
//
// # Security
//
// On a secure node, Gate checks each request: a Basic user and password
// (a browser asks for them after the 401's WWW-Authenticate challenge) or a
// Bearer token. Any role may look: each command still needs the role the
// shell needs for it. The console's reads are not written to the audit
// log (a tab polling every 2 s would fill it); its logins are.
//
// # Concurrency
//
// A Handler is safe for concurrent use. It runs the commands of one state
// in parallel, one goroutine each, and keeps the newest state for
// StateReuse (1 s): every open tab polls, and ping and verify each ask
// every node, so the requests of that second get the same state, and
// requests that come while a state is collected wait for it (singleflight)
// rather than start another round. On a secure node the state a caller
// gets may have been collected under another user's login; every command
// behind it needs role readonly, which every user has.
package console
