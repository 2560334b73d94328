package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Password hashing: argon2id, stored in the PHC string format that other
// tools read:
//
//	$argon2id$v=19$m=65536,t=1,p=2$<salt, base64 raw std>$<hash, base64 raw std>
//
// 64 MiB and one pass take about 40 ms of one core here: slow enough to
// make guessing expensive, fast enough for a login per session.
const (
	argonTime    = 1
	argonMemKiB  = 64 * 1024
	argonThreads = 2
	argonKeyLen  = 32
	saltLen      = 16
	// MinPasswordLen is the shortest password a user may set.
	MinPasswordLen = 8
)

// ErrWeakPassword is returned for a password shorter than MinPasswordLen.
var ErrWeakPassword = fmt.Errorf("auth: a password needs at least %d characters", MinPasswordLen)

// HashPassword returns pw's argon2id hash in PHC format, with a new salt.
func HashPassword(pw string) (string, error) {
	if len([]rune(pw)) < MinPasswordLen {
		return "", ErrWeakPassword
	}
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	h := argon2.IDKey([]byte(pw), salt, argonTime, argonMemKiB, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemKiB, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(h)), nil
}

// CheckPassword reports whether pw matches the PHC-format hash encoded,
// comparing in constant time. A malformed hash is an error, never a match.
func CheckPassword(encoded, pw string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return false, errors.New("auth: not an argon2id hash")
	}
	var version int
	var mem, time uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, fmt.Errorf("auth: argon2 version %q", parts[2])
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &time, &threads); err != nil || time == 0 || threads == 0 {
		return false, fmt.Errorf("auth: argon2 parameters %q", parts[3])
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[4])
	want, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false, errors.New("auth: argon2 salt or hash is not base64")
	}
	got := argon2.IDKey([]byte(pw), salt, time, mem, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
