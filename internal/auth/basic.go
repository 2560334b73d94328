package auth

import (
	"context"
	"crypto/sha256"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
)

// BasicTokens keeps the session tokens of HTTP Basic credentials, so that
// a browser or an HTTP client that sends its user and password with every
// request costs one login (one password hash check, one audit line) per
// token lifetime, not one per request. The HTTP API (internal/httpapi)
// and the web console (internal/console) each keep one.
//
// An entry is keyed by a SHA-256 of the user and password, so a wrong
// password never finds a right one's token; it is used for two thirds of
// its token's life. Forget drops an entry whose token was refused (the
// user was changed or removed since the login): the next request logs in
// again. The zero value is ready; safe for concurrent use.
type BasicTokens struct {
	mu sync.Mutex
	m  map[[32]byte]basicToken
}

type basicToken struct {
	token string
	until time.Time
}

// maxBasicTokens bounds the entries; past it the cache starts afresh.
const maxBasicTokens = 1024

// LoginFunc logs a user in and returns the token and when it expires.
type LoginFunc func(ctx context.Context, user, password string) (token string, expires time.Time, err error)

// Token returns a token for user and password: a cached one, or one from
// login (whose error it returns as it is).
func (b *BasicTokens) Token(ctx context.Context, user, password string, login LoginFunc) (string, error) {
	k := basicKey(user, password)
	now := time.Now()
	b.mu.Lock()
	if t, ok := b.m[k]; ok && now.Before(t.until) {
		b.mu.Unlock()
		return t.token, nil
	}
	b.mu.Unlock()
	tok, exp, err := login(ctx, user, password)
	if err != nil {
		return "", err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil || len(b.m) >= maxBasicTokens {
		b.m = make(map[[32]byte]basicToken)
	}
	b.m[k] = basicToken{token: tok, until: now.Add(exp.Sub(now) * 2 / 3)}
	return tok, nil
}

// Forget drops the token of user and password, if one is cached.
func (b *BasicTokens) Forget(user, password string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.m, basicKey(user, password))
}

func basicKey(user, password string) [32]byte {
	return sha256.Sum256([]byte(user + "\x00" + password))
}

// HTTPCaller checks the caller of an HTTP request that the node serves
// itself (the web console) for a call of method: its "Authorization:
// Bearer TOKEN", or its Basic user and password, logged in through g once
// per token lifetime (tokens). It returns the request's context carrying
// the user's claims (ClaimsFrom) and the caller's address (for the login
// throttle and the audit log), or the refusal as a gRPC status error:
// Unauthenticated without credentials or with wrong ones, PermissionDenied
// for a role that does not cover method. A cached token refused as
// revoked or expired is forgotten and the login made again, once.
func (g *Guard) HTTPCaller(r *http.Request, tokens *BasicTokens, method string) (context.Context, error) {
	ctx := peer.NewContext(r.Context(), &peer.Peer{Addr: httpAddr(r.RemoteAddr)})
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return g.AuthorizeToken(ctx, method, strings.TrimSpace(tok))
	}
	user, pw, ok := r.BasicAuth()
	if !ok {
		return ctx, refusal(codes.Unauthenticated, KindLoginRequired,
			"this store requires a login: give the user and password of one of its users (any role)")
	}
	login := func(ctx context.Context, user, pw string) (string, time.Time, error) {
		res, err := g.Login(ctx, &cairnpb.LoginRequest{User: user, Password: pw})
		if err != nil {
			return "", time.Time{}, err
		}
		return res.GetToken(), time.UnixMilli(res.GetExpiresAtMs()), nil
	}
	var err error
	for range 2 {
		var tok string
		if tok, err = tokens.Token(ctx, user, pw, login); err != nil {
			return ctx, err
		}
		var cctx context.Context
		if cctx, err = g.AuthorizeToken(ctx, method, tok); status.Code(err) != codes.Unauthenticated {
			return cctx, err
		}
		tokens.Forget(user, pw)
	}
	return ctx, err
}

// httpAddr is an HTTP caller's address as a net.Addr.
type httpAddr string

func (a httpAddr) Network() string { return "tcp" }
func (a httpAddr) String() string  { return string(a) }
