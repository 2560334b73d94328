package auth

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// The user table of a secure lite store, ROOT/security/users.json (a
// replicated store keeps it in the admin's metadata instead, design §3):
//
//	{"format": 1, "seq": 3, "users": [
//	  {"name": "admin", "hash": "$argon2id$v=19$m=65536,t=1,p=2$...", "role": "sysadmin", "changed_seq": 1},
//	  ...]}
//
// seq counts changes to the table; a user's changed_seq is the seq of its
// latest change (created, new password, new role). A token carries the seq
// it was issued at, and one older than its user's changed_seq is refused:
// a new password or a revoked role ends every session made before it.
// Only the argon2id hash is stored, never the password. The file is
// written 0600, whole, through a rename, so a reader sees the old table or
// the new one.
const UsersFile = "users.json"

// AdminPasswordFile holds the first admin user's generated password (0600).
const AdminPasswordFile = "admin.passwd"

// ErrNoUser is returned for a user name the table does not hold.
var ErrNoUser = errors.New("auth: no such user")

// User is one row of the table.
type User struct {
	Name       string `json:"name"`
	Hash       string `json:"hash"`
	Role       string `json:"role"`
	ChangedSeq uint64 `json:"changed_seq"`
}

type usersDoc struct {
	Format int    `json:"format"`
	Seq    uint64 `json:"seq"`
	Users  []User `json:"users"`
}

// Users is the user table of one security directory. Lookups read the
// table loaded last; Reload reads the file again (an offline `cairn
// security add-user` changes it under a running node). Safe for
// concurrent use.
type Users struct {
	path string
	mu   sync.RWMutex
	doc  usersDoc
	mod  int64 // the file's modification time when loaded (Unix ns)
}

var userName = regexp.MustCompile(`^[A-Za-z0-9_.@-]{1,64}$`)

// OpenUsers loads dir's user table; a missing file is an empty table.
func OpenUsers(dir string) (*Users, error) {
	u := &Users{path: filepath.Join(dir, UsersFile)}
	return u, u.Reload()
}

// Reload reads the table again if the file changed since it was loaded.
func (u *Users) Reload() error {
	st, err := os.Stat(u.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("auth: users: %w", err)
	}
	u.mu.RLock()
	same := st.ModTime().UnixNano() == u.mod
	u.mu.RUnlock()
	if same {
		return nil
	}
	b, err := os.ReadFile(u.path)
	if err != nil {
		return fmt.Errorf("auth: users: %w", err)
	}
	var d usersDoc
	if err := json.Unmarshal(b, &d); err != nil || d.Format != 1 {
		return fmt.Errorf("auth: %s is not a Cairn user table (format 1): %v", u.path, err)
	}
	u.mu.Lock()
	u.doc, u.mod = d, st.ModTime().UnixNano()
	u.mu.Unlock()
	return nil
}

// Lookup returns the user called name.
func (u *Users) Lookup(name string) (User, Role, error) {
	u.mu.RLock()
	defer u.mu.RUnlock()
	for _, x := range u.doc.Users {
		if x.Name == name {
			r, err := ParseRole(x.Role)
			return x, r, err
		}
	}
	return User{}, RoleNone, ErrNoUser
}

// Seq is the table's change count.
func (u *Users) Seq() uint64 {
	u.mu.RLock()
	defer u.mu.RUnlock()
	return u.doc.Seq
}

// Names lists the users and their roles, never their hashes.
func (u *Users) Names() [][2]string {
	u.mu.RLock()
	defer u.mu.RUnlock()
	out := make([][2]string, 0, len(u.doc.Users))
	for _, x := range u.doc.Users {
		out = append(out, [2]string{x.Name, x.Role})
	}
	return out
}

// CheckUserName reports whether name can be a user's name.
func CheckUserName(name string) error {
	if !userName.MatchString(name) {
		return fmt.Errorf("auth: user name %q: use 1 to 64 letters, digits, '_', '.', '@' or '-'", name)
	}
	return nil
}

// Set creates user name, or changes its password and role, and saves the
// table. Every session of the user made before ends.
func (u *Users) Set(name, password string, role Role) error {
	if !userName.MatchString(name) {
		return fmt.Errorf("auth: user name %q: use 1 to 64 letters, digits, '_', '.', '@' or '-'", name)
	}
	if role == RoleNone {
		return errors.New("auth: a user needs a role (readonly, readwrite, dbadmin or sysadmin)")
	}
	hash, err := HashPassword(password)
	if err != nil {
		return err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	d := u.doc
	d.Format, d.Seq = 1, d.Seq+1
	d.Users = slices.DeleteFunc(slices.Clone(d.Users), func(x User) bool { return x.Name == name })
	d.Users = append(d.Users, User{Name: name, Hash: hash, Role: role.String(), ChangedSeq: d.Seq})
	if err := writeUsers(u.path, d); err != nil {
		return err
	}
	u.doc = d
	if st, err := os.Stat(u.path); err == nil {
		u.mod = st.ModTime().UnixNano()
	}
	return nil
}

func writeUsers(path string, d usersDoc) error {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	_ = os.Remove(tmp) // left by a crash mid-write
	if err := writeFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("auth: users: %w", err)
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// NewPassword returns a random password of 24 characters.
func NewPassword() (string, error) {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// EnsureUsers gives dir a user table if it has none: one user, admin, with
// role sysadmin and a generated password in admin.passwd (0600), and a
// login file (client.security) that logs in as admin. It reports whether
// it made them.
func EnsureUsers(dir string) (bool, error) {
	if _, err := os.Stat(filepath.Join(dir, UsersFile)); err == nil {
		return false, nil
	}
	pw, err := NewPassword()
	if err != nil {
		return false, err
	}
	pwPath := filepath.Join(dir, AdminPasswordFile)
	_ = os.Remove(pwPath) // from an attempt that stopped before the table was saved
	if err := writeFile(pwPath, []byte(pw+"\n"), 0o600); err != nil {
		return false, err
	}
	u, err := OpenUsers(dir)
	if err != nil {
		return false, err
	}
	if err := u.Set("admin", pw, RoleSysAdmin); err != nil {
		return false, err
	}
	login := fmt.Sprintf("# Cairn login file: cairn kv|admin|bench --security %s\ncairn.ssl.ca=%s\n"+
		"cairn.auth.username=admin\ncairn.auth.password.file=%s\n",
		filepath.Join(dir, LoginFile), filepath.Join(dir, CAFile), pwPath)
	tmp := filepath.Join(dir, LoginFile+".tmp")
	_ = os.Remove(tmp)
	if err := writeFile(tmp, []byte(login), 0o600); err != nil {
		return false, err
	}
	return true, os.Rename(tmp, filepath.Join(dir, LoginFile))
}

// EncodeUsers is the user table document of users at seq.
func EncodeUsers(seq uint64, users []User) ([]byte, error) {
	return json.MarshalIndent(usersDoc{Format: 1, Seq: seq, Users: users}, "", "  ")
}

// ReadUsers returns dir's user table: its seq and users (none if missing).
func ReadUsers(dir string) (uint64, []User, error) {
	u, err := OpenUsers(dir)
	if err != nil {
		return 0, nil, err
	}
	u.mu.RLock()
	defer u.mu.RUnlock()
	return u.doc.Seq, slices.Clone(u.doc.Users), nil
}

// InstallUsers replaces dir's user table with doc (EncodeUsers), after
// checking it: every user has a valid name, an argon2id hash and a role.
func InstallUsers(dir string, doc []byte) error {
	var d usersDoc
	if err := json.Unmarshal(doc, &d); err != nil || d.Format != 1 {
		return fmt.Errorf("auth: not a Cairn user table (format 1): %v", err)
	}
	for _, x := range d.Users {
		if !userName.MatchString(x.Name) || !strings.HasPrefix(x.Hash, "$argon2id$") {
			return fmt.Errorf("auth: user table: user %q has a bad name or hash", x.Name)
		}
		if _, err := ParseRole(x.Role); err != nil {
			return fmt.Errorf("auth: user table: user %q: %w", x.Name, err)
		}
	}
	return writeUsers(filepath.Join(dir, UsersFile), d)
}
