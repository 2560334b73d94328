package auth

import (
	"fmt"
	"strings"
)

// Role is one of the built-in roles. Each includes the ones below it:
//
//	sysadmin ⊇ dbadmin ⊇ readwrite ⊇ readonly
//
// readonly reads records and runs the admin's show and verify commands;
// readwrite also writes records; dbadmin also runs plans, topology
// changes and snapshots; sysadmin also manages users and roles.
type Role uint8

// The built-in roles, in order.
const (
	RoleNone Role = iota
	RoleReadOnly
	RoleReadWrite
	RoleDBAdmin
	RoleSysAdmin
)

var roleNames = [...]string{"none", "readonly", "readwrite", "dbadmin", "sysadmin"}

func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// Covers reports whether a holder of r may do what needs need.
func (r Role) Covers(need Role) bool { return r >= need && r <= RoleSysAdmin }

// ParseRole reads a built-in role's name, in any case.
func ParseRole(s string) (Role, error) {
	for i, n := range roleNames[1:] {
		if strings.EqualFold(s, n) {
			return Role(i + 1), nil
		}
	}
	return RoleNone, fmt.Errorf("auth: unknown role %q (want readonly, readwrite, dbadmin or sysadmin)", s)
}

// Highest is the strongest of roles (RoleNone for none).
func Highest(roles []Role) Role {
	h := RoleNone
	for _, r := range roles {
		h = max(h, r)
	}
	return h
}
