package auth

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"
)

// AuditEntry is one line of a node's audit log (ROOT/audit.log), a JSON
// object per line that an operator can ship:
//
//	{"ts":"2026-11-27T06:00:00.000Z","node":"sn1","user":"","from":"127.0.0.1:53122",
//	 "what":"plan deploy-sn -sn sn2 -zn zn1 -wait","outcome":"ok"}
//
// user is empty until logins exist (design §4). Secrets in what are masked.
type AuditEntry struct {
	Time    time.Time `json:"ts"`
	Node    string    `json:"node,omitempty"`
	User    string    `json:"user"`
	From    string    `json:"from"`
	What    string    `json:"what"`
	Outcome string    `json:"outcome"` // "ok", or "error: " and the error
}

// Line is the entry as one JSON line.
func (e AuditEntry) Line() []byte {
	b, _ := json.Marshal(e) // only strings and a time: cannot fail
	return append(b, '\n')
}

// AdminWhat prints an admin command with its options in name order, the
// values of options that carry secrets (any name containing "password",
// "secret" or "token") masked.
func AdminWhat(command string, args map[string]string) string {
	var b strings.Builder
	b.WriteString(command)
	for _, k := range slices.Sorted(maps.Keys(args)) {
		b.WriteString(" -" + k)
		v := args[k]
		switch {
		case secretOption(k):
			b.WriteString(" ***")
		case v != "true":
			b.WriteString(" " + v)
		}
	}
	return b.String()
}

func secretOption(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "password") || strings.Contains(n, "secret") || strings.Contains(n, "token")
}
