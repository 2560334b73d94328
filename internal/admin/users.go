package admin

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/auth"
)

// The user table of a secure store (docs/design/20261127_security.md §3)
// lives in the admin's replicated metadata (Meta.Users). A user command
// changes it there, then installs the whole table on every storage node
// (Control.InstallUsers), whose guard reads it within a second. The first
// user command takes the table the store started with from the security
// directory of the node that runs it (Config.LocalUsers), so the admin user
// `cairn security init` made stays. Only argon2id hashes are kept, never a
// password; show users prints names and roles.

// usersSeed is the table to start from: the metadata's, or the local one.
func (s *Service) usersSeed(m *Meta) error {
	if m.Users != nil || s.cfg.LocalUsers == nil {
		return nil
	}
	seq, users, err := s.cfg.LocalUsers()
	if err != nil {
		return failed("the user table: %v", err)
	}
	m.UsersSeq, m.Users = seq, users
	if m.Users == nil {
		m.Users = []auth.User{}
	}
	return nil
}

// changeUsers runs fn on the table in the metadata, bumps its seq, and
// installs the new table on every storage node.
func (s *Service) changeUsers(ctx context.Context, what string, fn func(m *Meta) error) (*cairnpb.AdminReply, error) {
	m, err := s.store.update(ctx, func(m *Meta) error {
		if m.Store == "" {
			return ErrNoMeta
		}
		if err := s.usersSeed(m); err != nil {
			return err
		}
		m.UsersSeq++
		if err := fn(m); err != nil {
			return err
		}
		m.event("%s", what)
		return nil
	})
	if err != nil {
		return nil, err
	}
	doc, err := auth.EncodeUsers(m.UsersSeq, m.Users)
	if err != nil {
		return nil, err
	}
	var missed []string
	for _, sn := range m.SNs {
		if sn.Gone {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := s.control(net.JoinHostPort(sn.Host, strconv.Itoa(sn.Port))).InstallUsers(cctx,
			&controlpb.InstallUsersRequest{Store: m.Store, Users: doc})
		cancel()
		if err != nil {
			missed = append(missed, fmt.Sprintf("sn%d (%v)", sn.ID, err))
		}
	}
	if len(missed) > 0 {
		return nil, failed("%s; but these storage nodes did not take the new user table: %s. "+
			"Run a user command again once they are up (for example plan change-user on the same user)", what, strings.Join(missed, "; "))
	}
	return reply(fmt.Sprintf("%s; the user table is on %d storage nodes", what, len(m.SNs)), map[string]any{"users_seq": m.UsersSeq})
}

func userIndex(m *Meta, name string) int {
	return slices.IndexFunc(m.Users, func(u auth.User) bool { return u.Name == name })
}

func (s *Service) planCreateUser(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	role := auth.RoleReadWrite
	if a["admin"] == "true" {
		role = auth.RoleSysAdmin
	}
	hash, err := auth.HashPassword(a["password"])
	if err != nil {
		return nil, usageError("-password: %v", err)
	}
	name := a["name"]
	return s.changeUsers(ctx, fmt.Sprintf("user %s created with role %s", name, role), func(m *Meta) error {
		if userIndex(m, name) >= 0 {
			return failed("user %s already exists; plan change-user changes its password, plan grant its role", name)
		}
		if err := auth.CheckUserName(name); err != nil {
			return usageError("-name: %v", err)
		}
		m.Users = append(m.Users, auth.User{Name: name, Hash: hash, Role: role.String(), ChangedSeq: m.UsersSeq})
		return nil
	})
}

func (s *Service) planDropUser(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	name := a["name"]
	return s.changeUsers(ctx, "user "+name+" dropped", func(m *Meta) error {
		i := userIndex(m, name)
		if i < 0 {
			return notFound("there is no user %s; show users lists them", name)
		}
		if r, _ := auth.ParseRole(m.Users[i].Role); r == auth.RoleSysAdmin && sysadmins(m) == 1 {
			return failed("user %s is the last sysadmin: create or grant another first, or nobody could manage users", name)
		}
		m.Users = slices.Delete(m.Users, i, i+1)
		return nil
	})
}

func (s *Service) planChangeUser(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	if a["set-password"] != "true" {
		return nil, usageError("plan change-user: give -set-password -password NEW (roles change with plan grant and plan revoke)")
	}
	hash, err := auth.HashPassword(a["password"])
	if err != nil {
		return nil, usageError("-password: %v", err)
	}
	name := a["name"]
	return s.changeUsers(ctx, "user "+name+": new password; its sessions end", func(m *Meta) error {
		i := userIndex(m, name)
		if i < 0 {
			return notFound("there is no user %s; show users lists them", name)
		}
		m.Users[i].Hash, m.Users[i].ChangedSeq = hash, m.UsersSeq
		return nil
	})
}

// planGrant raises a user's role to -role (roles include the ones below).
func (s *Service) planGrant(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	return s.setRole(ctx, a, true)
}

// planRevoke takes -role (and the roles above it) from a user: it is left
// with the role below.
func (s *Service) planRevoke(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	return s.setRole(ctx, a, false)
}

func (s *Service) setRole(ctx context.Context, a map[string]string, grant bool) (*cairnpb.AdminReply, error) {
	r, err := auth.ParseRole(a["role"])
	if err != nil {
		return nil, usageError("-role: %v", err)
	}
	name := a["user"]
	var result auth.Role
	verb := "revoked from"
	if grant {
		verb = "granted to"
	}
	return s.changeUsers(ctx, fmt.Sprintf("role %s %s user %s", r, verb, name), func(m *Meta) error {
		i := userIndex(m, name)
		if i < 0 {
			return notFound("there is no user %s; show users lists them", name)
		}
		cur, _ := auth.ParseRole(m.Users[i].Role)
		switch {
		case grant:
			result = max(cur, r)
		case cur >= r:
			result = r - 1
		default:
			result = cur
		}
		if cur == auth.RoleSysAdmin && result < auth.RoleSysAdmin && sysadmins(m) == 1 {
			return failed("user %s is the last sysadmin: grant sysadmin to another user first", name)
		}
		if result == auth.RoleNone {
			return failed("revoking %s would leave user %s no role; plan drop-user removes a user", r, name)
		}
		m.Users[i].Role, m.Users[i].ChangedSeq = result.String(), m.UsersSeq
		return nil
	})
}

func sysadmins(m *Meta) int {
	n := 0
	for _, u := range m.Users {
		if r, _ := auth.ParseRole(u.Role); r == auth.RoleSysAdmin {
			n++
		}
	}
	return n
}

func (s *Service) showUsers(ctx context.Context, _ map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	if m.Users == nil && s.cfg.LocalUsers != nil {
		if _, users, err := s.cfg.LocalUsers(); err == nil {
			m.Users = users
		}
	}
	var b strings.Builder
	type row struct {
		Name string `json:"name"`
		Role string `json:"role"`
	}
	rows := []row{}
	for _, u := range m.Users {
		fmt.Fprintf(&b, "user: %s  role: %s\n", u.Name, u.Role)
		rows = append(rows, row{u.Name, u.Role})
	}
	if len(rows) == 0 {
		b.WriteString("no users: the store is not secure, or its user table is empty\n")
	}
	return reply(strings.TrimSuffix(b.String(), "\n"), rows)
}

func (s *Service) showRoles(context.Context, map[string]string) (*cairnpb.AdminReply, error) {
	text := "role: readonly   reads records; show and verify commands\n" +
		"role: readwrite  readonly, and writes records\n" +
		"role: dbadmin    readwrite, and plans, topology, snapshots\n" +
		"role: sysadmin   dbadmin, and users and roles (plan create-user, drop-user, change-user, grant, revoke)"
	return reply(text, []string{"readonly", "readwrite", "dbadmin", "sysadmin"})
}
