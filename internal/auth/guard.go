package auth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
)

// DefaultTokenLifetime is how long a session token is valid.
const DefaultTokenLifetime = time.Hour

// The error kinds of refused callers (ErrorDetail.kind).
const (
	KindLoginRequired    = "login_required"
	KindLoginFailed      = "login_failed"
	KindTokenExpired     = "token_expired"
	KindTokenInvalid     = "token_invalid"
	KindTokenRevoked     = "token_revoked"
	KindPermissionDenied = "permission_denied"
)

// methodRoles is the role each KV method needs. A method not listed (and
// not Auth's) needs sysadmin: what is not named is refused.
var methodRoles = map[string]Role{
	"/cairn.v1.KV/Get":         RoleReadOnly,
	"/cairn.v1.KV/MultiGet":    RoleReadOnly,
	"/cairn.v1.KV/StoreScan":   RoleReadOnly,
	"/cairn.v1.KV/StoreInfo":   RoleReadOnly,
	"/cairn.v1.KV/Put":         RoleReadWrite,
	"/cairn.v1.KV/Delete":      RoleReadWrite,
	"/cairn.v1.KV/Execute":     RoleReadWrite,
	"/cairn.v1.KV/PutMany":     RoleReadWrite,
	"/cairn.v1.KV/MultiDelete": RoleReadWrite,
	// A call stream opens for any user; each call on it is checked again
	// with the role of its op (AuthorizeCall).
	"/cairn.v1.KVStream/Calls": RoleReadOnly,
	"/cairn.v1.Admin/Command":  RoleReadOnly, // each command's role: the node checks it (node/sn_secure.go)
}

// Guard is a secure node's authentication and authorization: it serves
// cairn.v1.Auth (logins) and checks every other call's token and role
// (Unary and Stream interceptors). Safe for concurrent use.
type Guard struct {
	cairnpb.UnimplementedAuthServer
	key      []byte
	users    *Users
	store    string
	throttle *Throttle
	lifetime time.Duration
	audit    func(AuditEntry)
	now      func() time.Time
	reloaded atomic.Int64 // when users were last reloaded (Unix ns)
	verified tokenCache   // tokens whose MAC checked out, by token
	// nodeOnly are method prefixes only a node of the store may call (its
	// certificate is its credential; a user's token is never enough), and
	// nodeAlso methods a node may call without a token besides users with
	// the role (AllowNodes).
	nodeOnly []string
	nodeAlso map[string]bool
}

// AllowNodes sets the services only nodes may call (method prefixes, such
// as "/cairn.transport.v1.Raft/") and the methods nodes may call as well
// as users (a node forwarding an admin command). Call before serving.
func (g *Guard) AllowNodes(only []string, also ...string) {
	g.nodeOnly = only
	for _, m := range also {
		g.nodeAlso[m] = true
	}
}

func (g *Guard) isNodeOnly(method string) bool {
	for _, p := range g.nodeOnly {
		if strings.HasPrefix(method, p) {
			return true
		}
	}
	return false
}

// tokenCache remembers verified tokens, so a session's calls after its
// first skip the HMAC (design §4). Only the MAC check is skipped: expiry
// and revocation are checked on every call. Bounded: it starts over when
// full.
type tokenCache struct {
	mu sync.RWMutex
	m  map[string]Claims
}

const maxVerifiedTokens = 4096

func (t *tokenCache) get(tok string) (Claims, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	c, ok := t.m[tok]
	return c, ok
}

func (t *tokenCache) put(tok string, c Claims) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil || len(t.m) >= maxVerifiedTokens {
		t.m = make(map[string]Claims)
	}
	t.m[tok] = c
}

// NewGuard reads dir's token key and user table. audit, if not nil, gets
// one entry per login, failed login and renewal.
func NewGuard(dir, store string, lifetime time.Duration, audit func(AuditEntry)) (*Guard, error) {
	key, err := os.ReadFile(filepath.Join(dir, TokenKeyFile))
	if err != nil {
		return nil, fmt.Errorf("auth: the token key: %w", err)
	}
	if len(key) < 32 {
		return nil, fmt.Errorf("auth: %s holds %d bytes; want 32", filepath.Join(dir, TokenKeyFile), len(key))
	}
	users, err := OpenUsers(dir)
	if err != nil {
		return nil, err
	}
	if lifetime <= 0 {
		lifetime = DefaultTokenLifetime
	}
	if audit == nil {
		audit = func(AuditEntry) {}
	}
	return &Guard{key: key, users: users, store: store, throttle: NewThrottle(), lifetime: lifetime, audit: audit, now: time.Now,
		nodeAlso: map[string]bool{"/cairn.v1.KV/StoreInfo": true}}, nil
}

// fresh reloads the user table at most once a second, so an offline
// change reaches a running node within a second.
func (g *Guard) fresh() {
	now := g.now().UnixNano()
	if last := g.reloaded.Load(); now-last >= int64(time.Second) && g.reloaded.CompareAndSwap(last, now) {
		_ = g.users.Reload() // a bad file keeps the table loaded last
	}
}

// Login checks a user's password and returns a session token.
func (g *Guard) Login(ctx context.Context, req *cairnpb.LoginRequest) (*cairnpb.LoginResponse, error) {
	from := callerAddr(ctx)
	if d := g.throttle.Delay(req.GetUser(), from, g.now()); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
	_ = g.users.Reload() // a login sees a user added a moment ago; a bad file keeps the table loaded last
	u, role, err := g.users.Lookup(req.GetUser())
	ok := false
	if err == nil {
		ok, err = CheckPassword(u.Hash, req.GetPassword())
	}
	if !ok {
		g.throttle.Failed(req.GetUser(), from, g.now())
		g.audit(AuditEntry{Time: g.now(), User: req.GetUser(), From: from, What: "login", Outcome: "error: wrong user or password"})
		return nil, refusal(codes.Unauthenticated, KindLoginFailed, "login failed: wrong user or password")
	}
	g.throttle.Succeeded(req.GetUser(), from)
	g.audit(AuditEntry{Time: g.now(), User: u.Name, From: from, What: "login", Outcome: "ok"})
	tok, exp := g.issue(u.Name, role)
	return &cairnpb.LoginResponse{Token: tok, ExpiresAtMs: exp.UnixMilli(), Role: role.String()}, nil
}

// Renew trades a valid token for a new one.
func (g *Guard) Renew(ctx context.Context, req *cairnpb.RenewRequest) (*cairnpb.RenewResponse, error) {
	c, err := g.check(req.GetToken())
	if err != nil {
		return nil, err
	}
	g.audit(AuditEntry{Time: g.now(), User: c.User, From: callerAddr(ctx), What: "renew", Outcome: "ok"})
	tok, exp := g.issue(c.User, c.Role)
	return &cairnpb.RenewResponse{Token: tok, ExpiresAtMs: exp.UnixMilli(), Role: c.Role.String()}, nil
}

func (g *Guard) issue(user string, role Role) (string, time.Time) {
	now := g.now()
	exp := now.Add(g.lifetime)
	return SignToken(g.key, Claims{User: user, Role: role, UsersSeq: g.users.Seq(), Issued: now, Expires: exp}), exp
}

// check verifies a token, and that its user still holds what it says.
func (g *Guard) check(tok string) (Claims, error) {
	now := g.now()
	c, ok := g.verified.get(tok)
	if !ok {
		var err error
		c, err = VerifyToken(g.key, tok, now)
		switch {
		case errors.Is(err, ErrTokenExpired):
			return c, refusal(codes.Unauthenticated, KindTokenExpired, err.Error())
		case err != nil:
			return c, refusal(codes.Unauthenticated, KindTokenInvalid, err.Error())
		}
		g.verified.put(tok, c)
	} else if !now.Before(c.Expires) {
		return c, refusal(codes.Unauthenticated, KindTokenExpired, ErrTokenExpired.Error())
	}
	g.fresh()
	u, role, err := g.users.Lookup(c.User)
	if err != nil || u.ChangedSeq > c.UsersSeq || role != c.Role {
		return c, refusal(codes.Unauthenticated, KindTokenRevoked,
			"the session ended: the user was removed or changed since the login (log in again)")
	}
	return c, nil
}

type claimsKey struct{}

// ClaimsFrom returns the claims of the logged-in user whose call ctx is
// (false for a node or an unguarded server).
func ClaimsFrom(ctx context.Context) (Claims, bool) {
	c, ok := ctx.Value(claimsKey{}).(Claims)
	return c, ok
}

// authorize checks the caller of method; for a user, it returns ctx with
// the user's claims (ClaimsFrom).
func (g *Guard) authorize(ctx context.Context, method string) (context.Context, error) {
	c, err := g.authorizeClaims(ctx, method)
	if err != nil || c == nil {
		return ctx, err
	}
	return context.WithValue(ctx, claimsKey{}, *c), nil
}

func (g *Guard) authorizeClaims(ctx context.Context, method string) (*Claims, error) {
	if strings.HasPrefix(method, "/cairn.v1.Auth/") {
		return nil, nil
	}
	only := g.isNodeOnly(method)
	if (only || g.nodeAlso[method]) && g.nodeCaller(ctx) {
		return nil, nil
	}
	if only {
		return nil, refusal(codes.PermissionDenied, KindPermissionDenied,
			fmt.Sprintf("only a storage node of store %q, with its certificate from the store CA, may call %s", g.store, method))
	}
	return g.userCall(method, bearer(ctx))
}

// AuthorizeCall checks one call on a call stream (cairnpb.KVStream): tok,
// the stream's token, as the authorization header of method's unary call
// would be checked (MAC, expiry, the user unchanged since the login), and
// the role method needs. The stream's opening was checked by Stream.
func (g *Guard) AuthorizeCall(method, tok string) error {
	_, err := g.userCall(method, tok)
	return err
}

// AuthorizeToken checks tok for a call of method made on a user's behalf
// by the node itself (the web console's pages), as Unary checks a call's
// authorization header, and returns ctx carrying the user's claims
// (ClaimsFrom).
func (g *Guard) AuthorizeToken(ctx context.Context, method, tok string) (context.Context, error) {
	c, err := g.userCall(method, tok)
	if err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, claimsKey{}, *c), nil
}

// userCall checks a user's call of method with token tok.
func (g *Guard) userCall(method, tok string) (*Claims, error) {
	need, ok := methodRoles[method]
	if !ok {
		need = RoleSysAdmin
	}
	if tok == "" {
		return nil, refusal(codes.Unauthenticated, KindLoginRequired,
			"this store requires a login: give a user and password (cairn kv --security FILE with cairn.auth.username and cairn.auth.password.file)")
	}
	c, err := g.check(tok)
	if err != nil {
		return nil, err
	}
	if !c.Role.Covers(need) {
		return nil, refusal(codes.PermissionDenied, KindPermissionDenied,
			fmt.Sprintf("user %q has role %s; %s needs role %s", c.User, c.Role, strings.TrimPrefix(method, "/cairn.v1."), need))
	}
	return &c, nil
}

func (g *Guard) nodeCaller(ctx context.Context) bool {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return false
	}
	ti, ok := p.AuthInfo.(credentials.TLSInfo)
	return ok && NodePeer(ti.State, g.store)
}

// Unary is the unary server interceptor.
func (g *Guard) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	ctx, err := g.authorize(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	return h(ctx, req)
}

// Stream is the stream server interceptor.
func (g *Guard) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if _, err := g.authorize(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return h(srv, ss)
}

// bearer is the token of an "authorization: Bearer TOKEN" header.
func bearer(ctx context.Context) string {
	for _, v := range metadata.ValueFromIncomingContext(ctx, "authorization") { // no copy of the metadata
		if t, ok := strings.CutPrefix(v, "Bearer "); ok {
			return strings.TrimSpace(t)
		}
	}
	return ""
}

func callerAddr(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return ""
	}
	if host, _, err := net.SplitHostPort(p.Addr.String()); err == nil {
		return host
	}
	return p.Addr.String()
}

// refusal is a status carrying an ErrorDetail of kind, action FIX_INPUT.
func refusal(code codes.Code, kind, msg string) error {
	st := status.New(code, msg)
	if d, err := st.WithDetails(&cairnpb.ErrorDetail{Kind: kind, Action: cairnpb.ErrorDetail_ACTION_FIX_INPUT}); err == nil {
		return d.Err()
	}
	return st.Err()
}
