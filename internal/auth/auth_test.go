package auth

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestPasswordHash(t *testing.T) {
	h, err := HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=65536,t=1,p=2$") || strings.Contains(h, "correct") {
		t.Errorf("hash %q", h)
	}
	h2, _ := HashPassword("correct horse")
	if h2 == h {
		t.Error("two hashes of one password are equal: no salt")
	}
	for pw, want := range map[string]bool{"correct horse": true, "correct hors": false, "": false, "Correct horse": false} {
		if ok, err := CheckPassword(h, pw); err != nil || ok != want {
			t.Errorf("CheckPassword(%q) = %v, %v; want %v", pw, ok, err, want)
		}
	}
	if _, err := HashPassword("short"); !errors.Is(err, ErrWeakPassword) {
		t.Errorf("short password: %v", err)
	}
	for _, bad := range []string{"", "$argon2i$v=19$m=1,t=1,p=1$AA$AA", "$argon2id$v=19$m=x$AA$AA", "$argon2id$v=19$m=8,t=1,p=1$!!$AA"} {
		if ok, err := CheckPassword(bad, "correct horse"); err == nil || ok {
			t.Errorf("CheckPassword(%q) = %v, %v; want an error", bad, ok, err)
		}
	}
}

func TestRoles(t *testing.T) {
	for _, tc := range []struct {
		have, need Role
		ok         bool
	}{
		{RoleReadOnly, RoleReadOnly, true}, {RoleReadOnly, RoleReadWrite, false},
		{RoleReadWrite, RoleReadOnly, true}, {RoleDBAdmin, RoleReadWrite, true},
		{RoleDBAdmin, RoleSysAdmin, false}, {RoleSysAdmin, RoleDBAdmin, true}, {RoleNone, RoleReadOnly, false},
	} {
		if got := tc.have.Covers(tc.need); got != tc.ok {
			t.Errorf("%v covers %v = %v", tc.have, tc.need, got)
		}
	}
	if r, err := ParseRole("DBAdmin"); err != nil || r != RoleDBAdmin {
		t.Errorf("ParseRole(DBAdmin) = %v, %v", r, err)
	}
	if _, err := ParseRole("root"); err == nil {
		t.Error("ParseRole(root) succeeded")
	}
	if Highest([]Role{RoleReadOnly, RoleDBAdmin, RoleReadWrite}) != RoleDBAdmin {
		t.Error("Highest")
	}
}

func TestToken(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	now := time.UnixMilli(1_800_000_000_000)
	c := Claims{User: "alice", Role: RoleReadWrite, UsersSeq: 7, Issued: now, Expires: now.Add(time.Hour)}
	tok := SignToken(key, c)
	got, err := VerifyToken(key, tok, now.Add(time.Minute))
	if err != nil || got.User != "alice" || got.Role != RoleReadWrite || got.UsersSeq != 7 || !got.Expires.Equal(c.Expires) {
		t.Fatalf("VerifyToken = %+v, %v", got, err)
	}
	if _, err := VerifyToken(key, tok, now.Add(time.Hour)); !errors.Is(err, ErrTokenExpired) {
		t.Errorf("at expiry: %v", err)
	}
	if _, err := VerifyToken([]byte("another key, also thirty-two by"), tok, now); !errors.Is(err, ErrTokenInvalid) {
		t.Errorf("other key: %v", err)
	}
	// Any change to the payload breaks the MAC: a user who edits their role
	// gets nothing.
	forged := SignToken(key, Claims{User: "alice", Role: RoleSysAdmin, Issued: now, Expires: now.Add(time.Hour)})
	body, _, _ := strings.Cut(forged, ".")
	_, sig, _ := strings.Cut(tok, ".")
	for _, bad := range []string{"", "x", body + "." + sig, tok + "x", "." + sig, strings.Replace(tok, ".", "", 1)} {
		if _, err := VerifyToken(key, bad, now); !errors.Is(err, ErrTokenInvalid) {
			t.Errorf("VerifyToken(%q) = %v, want ErrTokenInvalid", bad, err)
		}
	}
}

func TestThrottle(t *testing.T) {
	th := NewThrottle()
	now := time.Unix(1000, 0)
	for i := 0; i < 5; i++ {
		if d := th.Delay("bob", "10.0.0.1", now); d != 0 {
			t.Fatalf("failure %d: delay %v before the free failures are used", i, d)
		}
		th.Failed("bob", "10.0.0.1", now)
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}
	for i, w := range want {
		if d := th.Delay("bob", "10.0.0.9", now); d != w {
			t.Errorf("user after %d extra failures: %v, want %v", i, d, w)
		}
		if d := th.Delay("carol", "10.0.0.1", now); d != w {
			t.Errorf("address after %d extra failures: %v, want %v", i, d, w)
		}
		th.Failed("bob", "10.0.0.1", now)
	}
	for range 40 {
		th.Failed("bob", "10.0.0.1", now)
	}
	if d := th.Delay("bob", "x", now); d != th.MaxDelay {
		t.Errorf("many failures: %v, want the cap %v", d, th.MaxDelay)
	}
	if d := th.Delay("dave", "10.0.0.2", now); d != 0 {
		t.Errorf("another user and address: %v", d)
	}
	if d := th.Delay("bob", "x", now.Add(2*time.Minute)); d != 0 {
		t.Errorf("after the window: %v", d)
	}
	th.Succeeded("bob", "10.0.0.1")
	if d := th.Delay("bob", "10.0.0.1", now); d != 0 {
		t.Errorf("after a success: %v", d)
	}
}

func TestAuditEntry(t *testing.T) {
	what := AdminWhat("plan create-user", map[string]string{"name": "bob", "password": "hunter22", "wait": "true", "admin": "true"})
	if what != "plan create-user -admin -name bob -password *** -wait" || strings.Contains(what, "hunter22") {
		t.Errorf("AdminWhat = %q", what)
	}
	e := AuditEntry{Time: time.Unix(0, 0).UTC(), Node: "sn1", From: "127.0.0.1:1", What: what, Outcome: "ok"}
	line := string(e.Line())
	if !strings.HasSuffix(line, "\n") || strings.Count(line, "\n") != 1 || !strings.Contains(line, `"outcome":"ok"`) || !strings.Contains(line, `"user":""`) {
		t.Errorf("line %q", line)
	}
}
