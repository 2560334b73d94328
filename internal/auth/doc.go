// Package auth is Cairn's secure mode (docs/design/20261127_security.md):
// the store's certificate authority and node certificates, the TLS
// configurations of the port and of its callers, login files, password
// hashes (argon2id, password.go), the built-in roles (roles.go), session
// tokens signed with the store's token key (token.go, its format drawn
// there), the throttling of failed logins (throttle.go), the user table of
// a security directory (users.go, drawn there), the operator's own PEM
// files (import.go), and the Guard (guard.go): the cairn.v1.Auth service
// and the gRPC interceptors that check every call's token and role, or a
// peer node's certificate for the node-only services.
//
// # Files
//
// A secure node reads its security directory (ROOT/security unless told
// otherwise), written by InitDir (`cairn security init`):
//
//	ca.pem           the store CA's certificate (ECDSA P-256)
//	ca-key.pem       the CA's key (0600): needed only to issue certificates
//	node.pem         this host's certificate, signed by the CA: the hosts as
//	node-key.pem     SANs, the URI cairn-node://STORE, server and client use
//	token.key        32 random bytes (0600): the store's token-signing key
//	users.json       the user table: names, argon2id hashes, roles (0600)
//	admin.passwd     the first user's (admin, sysadmin) generated password
//	client.security  a login file (ca.pem, admin, admin.passwd) for cairn
//	                 kv/admin/bench --security
//
// # Invariants
//
//   - Every TLS connection is TLS 1.3, verified against the store CA alone
//     (never the system roots).
//   - A peer is a node (NodePeer) only if it presented a certificate that
//     chains to the store CA and carries the node URI of this store; a
//     user never has one, and a node certificate is never a user.
//   - Keys are written 0600 and never logged; InitDir refuses to overwrite
//     an existing directory's files.
//   - No password is stored, logged or returned: only argon2id hashes, and
//     those never leave users.json and the admin's metadata.
//   - Every call but a login carries a token whose MAC, expiry and user
//     (not changed since the token was issued) the Guard checks, and a role
//     that covers the method; node-only methods take a node certificate of
//     this store instead, never a token.
//
// # Concurrency
//
// Functions are safe for concurrent use; the *tls.Config values they
// return must not be modified after use begins (crypto/tls's rule).
package auth
