package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
	"time"
)

// A session token, given by a login and sent with every request:
//
//	base64url(payload) "." base64url(HMAC-SHA256(token.key, payload))
//
//	payload: +------+------------+-----------+------------+------+-------------+------+
//	         | 0x01 | issued ms  | expiry ms | users seq  | role | uvarint len | user |
//	         |      | (8, BE)    | (8, BE)   | (8, BE)    | (1)  |             |      |
//	         +------+------------+-----------+------------+------+-------------+------+
//
// Any node holding the store's token.key verifies a token with no lookup.
// users seq is the user table's sequence when the token was issued: a node
// refuses a token older than its user's last change (drop, revoke, new
// password), which the admin publishes with the topology.
const tokenVersion = 0x01

// Token errors.
var (
	ErrTokenInvalid = errors.New("auth: the session token is not one this store issued (log in again)")
	ErrTokenExpired = errors.New("auth: the session token has expired (log in again, or renew before expiry)")
)

// Claims is what a token says.
type Claims struct {
	User     string
	Role     Role
	UsersSeq uint64
	Issued   time.Time
	Expires  time.Time
}

// SignToken makes a token for c with key.
func SignToken(key []byte, c Claims) string {
	p := make([]byte, 0, 1+8*3+1+binary.MaxVarintLen64+len(c.User))
	p = append(p, tokenVersion)
	p = binary.BigEndian.AppendUint64(p, uint64(c.Issued.UnixMilli()))
	p = binary.BigEndian.AppendUint64(p, uint64(c.Expires.UnixMilli()))
	p = binary.BigEndian.AppendUint64(p, c.UsersSeq)
	p = append(p, byte(c.Role))
	p = binary.AppendUvarint(p, uint64(len(c.User)))
	p = append(p, c.User...)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(p) + "." + enc.EncodeToString(mac(key, p))
}

// VerifyToken checks tok's MAC with key and its expiry against now, and
// returns its claims.
func VerifyToken(key []byte, tok string, now time.Time) (Claims, error) {
	body, sig, ok := strings.Cut(tok, ".")
	if !ok {
		return Claims{}, ErrTokenInvalid
	}
	enc := base64.RawURLEncoding
	p, err1 := enc.DecodeString(body)
	s, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(s, mac(key, p)) {
		return Claims{}, ErrTokenInvalid
	}
	c, ok := parseClaims(p)
	if !ok {
		return Claims{}, ErrTokenInvalid
	}
	if !now.Before(c.Expires) {
		return c, ErrTokenExpired
	}
	return c, nil
}

func parseClaims(p []byte) (Claims, bool) {
	const fixed = 1 + 8*3 + 1
	if len(p) < fixed || p[0] != tokenVersion {
		return Claims{}, false
	}
	c := Claims{
		Issued:   time.UnixMilli(int64(binary.BigEndian.Uint64(p[1:]))),
		Expires:  time.UnixMilli(int64(binary.BigEndian.Uint64(p[9:]))),
		UsersSeq: binary.BigEndian.Uint64(p[17:]),
		Role:     Role(p[25]),
	}
	n, w := binary.Uvarint(p[fixed:])
	if w <= 0 || uint64(len(p)-fixed-w) != n || c.Role > RoleSysAdmin {
		return Claims{}, false
	}
	c.User = string(p[fixed+w:])
	return c, true
}

func mac(key, p []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(p)
	return m.Sum(nil)
}
