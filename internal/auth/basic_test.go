package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

func TestHTTPCaller(t *testing.T) {
	g, dir := testGuard(t)
	var mu sync.Mutex
	var logins []AuditEntry
	g.audit = func(e AuditEntry) {
		mu.Lock()
		defer mu.Unlock()
		logins = append(logins, e)
	}
	tokens := &BasicTokens{}
	const method = "/cairn.v1.Admin/Command" // readonly
	call := func(set func(*http.Request)) (string, codes.Code, string) {
		r := httptest.NewRequest("GET", "/console", nil)
		r.RemoteAddr = "192.0.2.7:4242"
		set(r)
		ctx, err := g.HTTPCaller(r, tokens, method)
		code, kind := kindOf(err)
		c, _ := ClaimsFrom(ctx)
		return c.User, code, kind
	}
	basic := func(u, pw string) func(*http.Request) { return func(r *http.Request) { r.SetBasicAuth(u, pw) } }
	for _, c := range []struct {
		what       string
		set        func(*http.Request)
		user       string
		code       codes.Code
		kind       string
		loginsMade int
	}{
		{"no credentials", func(*http.Request) {}, "", codes.Unauthenticated, KindLoginRequired, 0},
		{"a wrong password", basic("ro", "nope-nope"), "", codes.Unauthenticated, KindLoginFailed, 1},
		{"a right password", basic("ro", "password-ro"), "ro", codes.OK, "", 1},
		{"the same again: the cached token", basic("ro", "password-ro"), "ro", codes.OK, "", 0},
		{"a garbage bearer token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer xyz") }, "", codes.Unauthenticated, KindTokenInvalid, 0},
	} {
		mu.Lock()
		before := len(logins)
		mu.Unlock()
		user, code, kind := call(c.set)
		mu.Lock()
		made := len(logins) - before
		mu.Unlock()
		if user != c.user || code != c.code || kind != c.kind || made != c.loginsMade {
			t.Errorf("%s: user %q %v %q, %d logins; want %q %v %q, %d logins", c.what, user, code, kind, made, c.user, c.code, c.kind, c.loginsMade)
		}
	}
	if len(logins) == 0 || logins[0].From != "192.0.2.7" {
		t.Errorf("the login audit lines %+v do not name the HTTP caller's address", logins)
	}
	// A role that does not cover the method is refused.
	r := httptest.NewRequest("GET", "/console", nil)
	r.SetBasicAuth("ro", "password-ro")
	if _, err := g.HTTPCaller(r, tokens, "/cairn.v1.KV/Put"); err == nil {
		t.Error("readonly was let through to a write")
	} else if code, kind := kindOf(err); code != codes.PermissionDenied || kind != KindPermissionDenied {
		t.Errorf("readonly on a write: %v %q", code, kind)
	}

	// rw logs in, then its password changes: the cached token is revoked,
	// dropped, and the old password's login fails; the new one works.
	if u, code, _ := call(basic("rw", "password-rw")); u != "rw" || code != codes.OK {
		t.Fatalf("rw: %q %v", u, code)
	}
	setElsewhere(t, g, dir, "rw", "new-password", RoleReadWrite)
	if u, code, kind := call(basic("rw", "password-rw")); code != codes.Unauthenticated || kind != KindLoginFailed || u != "" {
		t.Errorf("the old password after the change: %q %v %q, want a failed login", u, code, kind)
	}
	if u, code, _ := call(basic("rw", "new-password")); u != "rw" || code != codes.OK {
		t.Errorf("the new password: %q %v", u, code)
	}
}

func TestBasicTokensLifetimeAndForget(t *testing.T) {
	var b BasicTokens
	n := 0
	login := func(_ context.Context, user, pw string) (string, time.Time, error) {
		n++
		return fmt.Sprintf("tok%d", n), time.Now().Add(time.Hour), nil
	}
	ctx := context.Background()
	a1, _ := b.Token(ctx, "u", "p", login)
	a2, _ := b.Token(ctx, "u", "p", login)
	other, _ := b.Token(ctx, "u", "q", login)
	if a1 != "tok1" || a2 != "tok1" || other != "tok2" {
		t.Fatalf("tokens %q %q %q: want one login per user and password", a1, a2, other)
	}
	b.Forget("u", "p")
	if a3, _ := b.Token(ctx, "u", "p", login); a3 != "tok3" {
		t.Errorf("after Forget: %q, want a new login", a3)
	}
	short := func(_ context.Context, _, _ string) (string, time.Time, error) {
		n++
		return fmt.Sprintf("tok%d", n), time.Now().Add(-time.Second), nil // already past two thirds of its life
	}
	s1, _ := b.Token(ctx, "s", "p", short)
	s2, _ := b.Token(ctx, "s", "p", short)
	if s1 == s2 {
		t.Errorf("a token past two thirds of its life was reused: %q", s1)
	}
	failing := func(context.Context, string, string) (string, time.Time, error) {
		return "", time.Time{}, errors.New("refused")
	}
	if tok, err := b.Token(ctx, "f", "p", failing); err == nil || tok != "" {
		t.Errorf("a failed login gave %q %v", tok, err)
	}
}
