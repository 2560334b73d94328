package auth

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
)

func testGuard(t *testing.T) (*Guard, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, TokenKeyFile), make([]byte, 32), 0o600); err != nil {
		t.Fatal(err)
	}
	u, err := OpenUsers(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]Role{"ro": RoleReadOnly, "rw": RoleReadWrite} {
		if err := u.Set(name, "password-"+name, r); err != nil {
			t.Fatal(err)
		}
	}
	g, err := NewGuard(dir, "kvstore", time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g, dir
}

// setElsewhere sets a user's password and role through another handle on
// the users file in dir (as another process would), and moves g's clock
// past its reload interval so that g reads the change.
func setElsewhere(t *testing.T, g *Guard, dir, name, password string, role Role) {
	t.Helper()
	other, err := OpenUsers(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Set(name, password, role); err != nil {
		t.Fatal(err)
	}
	g.now = func() time.Time { return time.Now().Add(2 * time.Second) }
}

func kindOf(err error) (codes.Code, string) {
	st := status.Convert(err)
	for _, d := range st.Details() {
		if ed, ok := d.(*cairnpb.ErrorDetail); ok {
			return st.Code(), ed.GetKind()
		}
	}
	return st.Code(), ""
}

func TestGuardRolesAndRevocation(t *testing.T) {
	g, dir := testGuard(t)
	ctx := context.Background()
	login := func(user, pw string) string {
		r, err := g.Login(ctx, &cairnpb.LoginRequest{User: user, Password: pw})
		if err != nil {
			t.Fatalf("login %s: %v", user, err)
		}
		return r.GetToken()
	}
	with := func(tok string) context.Context {
		return metadata.NewIncomingContext(ctx, metadata.Pairs("authorization", "Bearer "+tok))
	}
	ro, rw := login("ro", "password-ro"), login("rw", "password-rw")
	cases := []struct {
		ctx    context.Context
		method string
		code   codes.Code
		kind   string
	}{
		{ctx, "/cairn.v1.KV/Get", codes.Unauthenticated, KindLoginRequired},
		{with(ro), "/cairn.v1.KV/Get", codes.OK, ""},
		{with(ro), "/cairn.v1.KV/Put", codes.PermissionDenied, KindPermissionDenied},
		{with(rw), "/cairn.v1.KV/Put", codes.OK, ""},
		{with(rw), "/cairn.v1.Admin/Frobnicate", codes.PermissionDenied, KindPermissionDenied}, // unlisted: sysadmin
		{with("garbage"), "/cairn.v1.KV/Get", codes.Unauthenticated, KindTokenInvalid},
		{ctx, "/cairn.v1.Auth/Login", codes.OK, ""},
	}
	for _, c := range cases {
		code, kind := kindOf(authErr(g.authorize(c.ctx, c.method)))
		if code != c.code || kind != c.kind {
			t.Errorf("%s: %v %q, want %v %q", c.method, code, kind, c.code, c.kind)
		}
	}
	if _, err := g.Login(ctx, &cairnpb.LoginRequest{User: "rw", Password: "wrong-password"}); err == nil {
		t.Fatal("a wrong password logged in")
	} else if code, kind := kindOf(err); code != codes.Unauthenticated || kind != KindLoginFailed {
		t.Errorf("wrong password: %v %q", code, kind)
	}
	// A new password, set by another process, ends rw's sessions.
	setElsewhere(t, g, dir, "rw", "new-password", RoleReadWrite)
	if code, kind := kindOf(authErr(g.authorize(with(rw), "/cairn.v1.KV/Get"))); code != codes.Unauthenticated || kind != KindTokenRevoked {
		t.Errorf("old session after a new password: %v %q", code, kind)
	}
	if code, _ := kindOf(authErr(g.authorize(with(ro), "/cairn.v1.KV/Get"))); code != codes.OK {
		t.Errorf("another user's session after rw's change: %v", code)
	}
	// A verified (cached) token still expires.
	g.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if code, kind := kindOf(authErr(g.authorize(with(ro), "/cairn.v1.KV/Get"))); code != codes.Unauthenticated || kind != KindTokenExpired {
		t.Errorf("a cached token past its expiry: %v %q", code, kind)
	}
}

func TestUsersTable(t *testing.T) {
	dir := t.TempDir()
	u, err := OpenUsers(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Set("bad name", "password1", RoleReadOnly); err == nil {
		t.Error("a name with a space was taken")
	}
	if err := u.Set("x", "short", RoleReadOnly); err == nil {
		t.Error("a short password was taken")
	}
	if err := u.Set("x", "password1", RoleNone); err == nil {
		t.Error("a user without a role was taken")
	}
	if err := u.Set("x", "password1", RoleDBAdmin); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, UsersFile))
	if err != nil || len(b) == 0 || b[0] != '{' || strings.Contains(string(b), "password1") {
		t.Fatalf("users.json (must hold no password): %v %s", err, b)
	}
	st, _ := os.Stat(filepath.Join(dir, UsersFile))
	if st.Mode().Perm() != 0o600 {
		t.Errorf("users.json mode %v, want 0600", st.Mode().Perm())
	}
	if _, role, err := u.Lookup("x"); err != nil || role != RoleDBAdmin || u.Seq() != 1 {
		t.Errorf("Lookup x: %v %v seq %d", role, err, u.Seq())
	}
	if _, _, err := u.Lookup("nobody"); err != ErrNoUser {
		t.Errorf("Lookup nobody: %v", err)
	}
}

func authErr(_ context.Context, err error) error { return err }
