package auth

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Login is a login file (`--security FILE`), a small properties file like
// Oracle NoSQL's -security file:
//
//	# comments and blank lines are skipped
//	cairn.ssl.ca=/var/cairn/security/ca.pem       the store CA (required)
//	cairn.auth.username=alice                      the user (once users exist)
//	cairn.auth.password.file=/home/alice/.cairnpw  a file holding the password
//	oracle.kv.transport=ssl                        Oracle's keys are accepted
//
// A relative path is read relative to the login file's directory.
type Login struct {
	CAFile       string
	User         string
	PasswordFile string
}

// ReadLogin reads and checks a login file.
func ReadLogin(path string) (Login, error) {
	f, err := os.Open(path)
	if err != nil {
		return Login{}, fmt.Errorf("login file: %w", err)
	}
	defer f.Close()
	var l Login
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return Login{}, fmt.Errorf("login file %s line %d: want key=value, got %q", path, n, line)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case k == "cairn.ssl.ca":
			l.CAFile = resolve(path, v)
		case k == "cairn.auth.username":
			l.User = v
		case k == "cairn.auth.password.file":
			l.PasswordFile = resolve(path, v)
		case strings.HasPrefix(k, "oracle.kv."):
			// Oracle's settings (transport, SSL trust store...) are accepted
			// so one file serves both; Cairn reads its own keys.
		default:
			return Login{}, fmt.Errorf("login file %s line %d: unknown key %q (want cairn.ssl.ca, cairn.auth.username, cairn.auth.password.file)", path, n, k)
		}
	}
	if err := sc.Err(); err != nil {
		return Login{}, fmt.Errorf("login file %s: %w", path, err)
	}
	if l.CAFile == "" {
		return Login{}, fmt.Errorf("login file %s: cairn.ssl.ca (the store CA's ca.pem) is missing", path)
	}
	return l, nil
}

// TLS is the client TLS configuration the login file describes.
func (l Login) TLS() (*tls.Config, error) { return ClientTLS(l.CAFile, "") }

func resolve(file, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(file), p)
}

// Password reads the password file (its first line); "" when the login
// file names no user.
func (l Login) Password() (string, error) {
	if l.User == "" {
		return "", nil
	}
	if l.PasswordFile == "" {
		return "", fmt.Errorf("login file: cairn.auth.username is %q but cairn.auth.password.file is missing", l.User)
	}
	b, err := os.ReadFile(l.PasswordFile)
	if err != nil {
		return "", fmt.Errorf("login file: the password file: %w", err)
	}
	pw, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimRight(pw, "\r"), nil
}
