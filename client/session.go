package client

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"google.golang.org/grpc/codes"
)

// session is a login to a secure store: the token every call carries
// (it is the connections' per-RPC credentials), renewed in the background
// at two thirds of its lifetime, and made again by a new login if a
// renewal is refused. Safe for concurrent use.
type session struct {
	user, password string

	cur     atomic.Pointer[string] // token, for the call streams (current)
	mu      sync.Mutex
	token   string
	md      map[string]string // the call metadata of token, built once per token (never modified after)
	issued  time.Time
	expires time.Time
	auth    cairnpb.AuthClient // the connection the login went through
	done    chan struct{}
	once    sync.Once
	started bool
}

func newSession(user, password string) *session {
	return &session{user: user, password: password, done: make(chan struct{})}
}

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (s *session) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.md, nil // nil before the login: the login itself carries none
}

// current returns the session's token ("" before the login).
func (s *session) current() string {
	if t := s.cur.Load(); t != nil {
		return *t
	}
	return ""
}

// RequireTransportSecurity implements credentials.PerRPCCredentials: a
// token never travels in plaintext.
func (s *session) RequireTransportSecurity() bool { return true }

func (s *session) set(tok string, expiresMs int64, ac cairnpb.AuthClient) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token, s.issued, s.expires, s.auth = tok, time.Now(), time.UnixMilli(expiresMs), ac
	s.cur.Store(&tok)
	s.md = map[string]string{"authorization": "Bearer " + tok}
	if !s.started {
		s.started = true
		go s.renewLoop()
	}
}

// renewLoop renews the token at two thirds of its lifetime until stop.
func (s *session) renewLoop() {
	for {
		s.mu.Lock()
		wait := time.Until(s.issued.Add(s.expires.Sub(s.issued) * 2 / 3))
		s.mu.Unlock()
		select {
		case <-s.done:
			return
		case <-time.After(max(wait, 100*time.Millisecond)):
		}
		s.renew()
	}
}

func (s *session) renew() {
	s.mu.Lock()
	tok, ac := s.token, s.auth
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	defer cancel()
	if r, err := ac.Renew(ctx, &cairnpb.RenewRequest{Token: tok}); err == nil {
		s.set(r.GetToken(), r.GetExpiresAtMs(), ac)
		return
	}
	if r, err := ac.Login(ctx, &cairnpb.LoginRequest{User: s.user, Password: s.password}); err == nil {
		s.set(r.GetToken(), r.GetExpiresAtMs(), ac)
	}
	// Otherwise the calls fail with the node's reason until a later try works.
}

func (s *session) stop() {
	if s != nil {
		s.once.Do(func() { close(s.done) })
	}
}

// login logs the client in through the first host that answers.
func (c *Client) login(ctx context.Context) error {
	r, ac, err := c.authLogin(ctx, c.session.user, c.session.password)
	if err != nil {
		return err
	}
	c.session.set(r.GetToken(), r.GetExpiresAtMs(), ac)
	return nil
}

// Login asks the store for a session token for user, without making it
// this client's: for a caller that hands tokens on (the HTTP API). A
// request carries one as gRPC metadata "authorization: Bearer TOKEN".
func (c *Client) Login(ctx context.Context, user, password string) (token string, expires time.Time, role string, err error) {
	r, _, err := c.authLogin(ctx, user, password)
	if err != nil {
		return "", time.Time{}, "", err
	}
	return r.GetToken(), time.UnixMilli(r.GetExpiresAtMs()), r.GetRole(), nil
}

func (c *Client) authLogin(ctx context.Context, user, password string) (*cairnpb.LoginResponse, cairnpb.AuthClient, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var failures []string
	var last *Error
	for i, h := range c.cfg.Hosts {
		ac := cairnpb.NewAuthClient(c.helpers[i].conns[0])
		r, err := ac.Login(ctx, &cairnpb.LoginRequest{User: user, Password: password})
		if err == nil {
			return r, ac, nil
		}
		last = convertError(err, false, false)
		if last.Code == codes.Unauthenticated || last.Code == codes.PermissionDenied {
			return nil, nil, last // the password is wrong everywhere
		}
		if last.Code == codes.Unimplemented { // a node without the Auth service
			return nil, nil, &Error{Code: codes.FailedPrecondition, Kind: KindNotSecure, Action: ActionFixInput,
				Msg: fmt.Sprintf("login as %q: %s is not a secure store, so it has no users: send requests without credentials (a store is secure when its nodes start with --secure)", user, h)}
		}
		failures = append(failures, h+": "+last.Msg)
	}
	return nil, nil, &Error{Code: last.Code, Kind: last.Kind, Action: last.Action,
		Msg: fmt.Sprintf("login as %q: no host answered: %s", user, strings.Join(failures, "; "))}
}
