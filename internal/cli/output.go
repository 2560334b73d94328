package cli

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cairndb/cairn/client"
)

// Printable reports whether v can be shown as is on one line of text: valid
// UTF-8 with only printable characters (space included, tab and newline
// not).
func Printable(v []byte) bool {
	if !utf8.Valid(v) {
		return false
	}
	for _, r := range string(v) {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// ShowValue formats a value for a text line: as is when Printable, else Go
// quoted (%q).
func ShowValue(v []byte) string {
	if Printable(v) {
		return string(v)
	}
	return fmt.Sprintf("%q", v)
}

// TextLine formats one record of multi-get or scan output: "KEY\tVALUE", or
// "KEY" when keysOnly.
func TextLine(r client.Record, keysOnly bool) string {
	if keysOnly {
		return r.Key.String()
	}
	return r.Key.String() + "\t" + ShowValue(r.Value)
}

// RecordJSON is the JSON form of a record. Value holds a valid UTF-8 value;
// any other value is in ValueBase64. Keys-only output has just Key.
type RecordJSON struct {
	Key         string  `json:"key"`
	Value       *string `json:"value,omitempty"`
	ValueBase64 *string `json:"value_base64,omitempty"`
	Version     string  `json:"version,omitempty"`
	Expiration  string  `json:"expiration,omitempty"` // RFC 3339, UTC; omitted if it never expires
}

// ToJSON converts a record; keysOnly keeps only the key.
func ToJSON(r client.Record, keysOnly bool) RecordJSON {
	j := RecordJSON{Key: r.Key.String()}
	if keysOnly {
		return j
	}
	j.Value, j.ValueBase64 = jsonValue(r.Value)
	j.Version = r.Version.String()
	j.Expiration = formatExpiration(r.Expiration)
	return j
}

// jsonValue is v for JSON: as text when it is valid UTF-8, else in
// base64 (the other is nil).
func jsonValue(v []byte) (text, b64 *string) {
	if utf8.Valid(v) {
		s := string(v)
		return &s, nil
	}
	s := base64.StdEncoding.EncodeToString(v)
	return nil, &s
}

func formatExpiration(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// writeJSON writes v as one line of JSON.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// jsonArray streams a JSON array, one element per line, so a scan of any
// size prints without holding its records.
type jsonArray struct {
	w   io.Writer
	n   int
	err error
}

func (a *jsonArray) add(v any) {
	if a.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		a.err = err
		return
	}
	sep := ",\n"
	if a.n == 0 {
		sep = "[\n"
	}
	a.n++
	_, a.err = fmt.Fprintf(a.w, "%s%s", sep, b)
}

func (a *jsonArray) close() error {
	if a.err != nil {
		return a.err
	}
	end := "\n]\n"
	if a.n == 0 {
		end = "[]\n"
	}
	_, err := io.WriteString(a.w, end)
	return err
}
