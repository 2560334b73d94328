package semcases

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Case is one named sequence of steps over an empty key space.
type Case struct {
	Name  string `json:"name"`
	Steps []Step `json:"steps"`
}

// Step is one operation and what it must do.
type Step struct {
	Op         string  `json:"op"` // put, get, delete, multi_get, multi_delete, execute
	Key        string  `json:"key"`
	Parent     string  `json:"parent"`
	Value      *string `json:"value"`
	ValueBytes string  `json:"value_bytes"` // max_value_bytes or max_value_bytes+1
	If         string  `json:"if"`          // absent, present, version
	Version    string  `json:"version"`     // the saved version an "if": "version" names
	Save       string  `json:"save"`        // save the put's version under this name
	Abort      bool    `json:"abort_if_unsuccessful"`
	Depth      string  `json:"depth"`
	Range      *Range  `json:"range"`
	Ops        []Step  `json:"ops"` // execute's operations
	Expect     Expect  `json:"expect"`
}

// Range bounds the component after a multi-key operation's parent: a prefix,
// or bounds that are inclusive unless marked exclusive.
type Range struct {
	Start          *string `json:"start"`
	End            *string `json:"end"`
	Prefix         *string `json:"prefix"`
	StartExclusive bool    `json:"start_exclusive"`
	EndExclusive   bool    `json:"end_exclusive"`
}

// Expect is a step's outcome; the fields that apply depend on the op.
type Expect struct {
	Done      json.RawMessage `json:"done"` // a bool, or for execute a list of bools
	Value     *string         `json:"value"`
	Version   string          `json:"version"`
	Missing   bool            `json:"missing"`
	Keys      []string        `json:"keys"`
	Values    []string        `json:"values"`
	Deleted   *int            `json:"deleted"`
	AbortedAt *int            `json:"aborted_at"`
	Error     string          `json:"error"` // the typed error's kind
}

// Load reads the table at path.
func Load(path string) ([]Case, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f struct {
		Cases []Case `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(f.Cases) == 0 {
		return nil, fmt.Errorf("%s: no cases", path)
	}
	return f.Cases, nil
}

// Tagged isolates a case: the first component of key gets tag in front.
// The root "/" (and anything not starting with '/') is left alone.
func Tagged(tag, key string) string {
	if len(key) > 1 && key[0] == '/' {
		return "/" + tag + key[1:]
	}
	return key
}

// ValueOf is a step's value: its text, or value_bytes bytes of 'x' given
// the store's max_value_bytes.
func ValueOf(st Step, maxValueBytes int64) ([]byte, error) {
	switch st.ValueBytes {
	case "":
		if st.Value == nil {
			return nil, nil
		}
		return []byte(*st.Value), nil
	case "max_value_bytes":
		return []byte(strings.Repeat("x", int(maxValueBytes))), nil
	case "max_value_bytes+1":
		return []byte(strings.Repeat("x", int(maxValueBytes)+1)), nil
	}
	return nil, fmt.Errorf("unknown value_bytes %q", st.ValueBytes)
}

// DoneBool is a put's or delete's expected done flag.
func (e Expect) DoneBool() (bool, error) {
	var b bool
	err := json.Unmarshal(e.Done, &b)
	return b, err
}

// DoneList is an execute's expected done flags.
func (e Expect) DoneList() ([]bool, error) {
	var b []bool
	err := json.Unmarshal(e.Done, &b)
	return b, err
}
