package files

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// ErrCorrupt is returned (wrapped, naming the file and what is wrong) by
// ReadJSON for a file that is not a whole, matching checked file. It is
// never retried: reading again gives the same bytes.
var ErrCorrupt = errors.New("files: corrupt file")

// corruptError is an ErrCorrupt that says which file and what is wrong.
type corruptError struct {
	path, problem string
}

func (e *corruptError) Error() string { return e.path + " is corrupt: " + e.problem }

// Unwrap returns ErrCorrupt.
func (e *corruptError) Unwrap() error { return ErrCorrupt }

func corrupt(path, format string, args ...any) error {
	return &corruptError{path: path, problem: fmt.Sprintf(format, args...)}
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crcHex formats a CRC-32C as a checked file holds it.
func crcHex(b []byte) string { return fmt.Sprintf("%08x", crc32.Checksum(b, castagnoli)) }

// WriteJSON writes v as a checked file at path (see the package doc),
// through WriteAtomic.
func WriteJSON(fs FS, path string, v any) error {
	b, err := encodeChecked(v)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	return writeAtomic(fs, path, b)
}

// encodeChecked returns the bytes of the checked file holding v.
func encodeChecked(v any) ([]byte, error) {
	data, err := json.MarshalIndent(v, "  ", "  ")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(len(data) + 48)
	fmt.Fprintf(&b, "{\n  \"crc32c\": %q,\n  \"data\": ", crcHex(data))
	b.Write(data)
	b.WriteString("\n}\n")
	return b.Bytes(), nil
}

// ReadJSON reads the checked file at path, verifies it, and decodes its
// "data" into v. A file that fails verification or does not decode into v
// is an error wrapping ErrCorrupt; errors of fs are returned as they are,
// naming path.
func ReadJSON(fs FS, path string, v any) error {
	b, err := ReadFile(fs, path)
	if err != nil {
		return err
	}
	data, err := verifyChecked(path, b)
	if err != nil {
		return err
	}
	var bad *json.InvalidUnmarshalError
	if err := json.Unmarshal(data, v); errors.As(err, &bad) {
		return fmt.Errorf("reading %s: %w", path, err)
	} else if err != nil {
		return corrupt(path, "its data does not decode into a %T: %v", v, err)
	}
	return nil
}

// verifyChecked parses a checked file's envelope strictly and returns the
// bytes of "data" once they match "crc32c".
func verifyChecked(path string, b []byte) ([]byte, error) {
	sum, data, err := parseEnvelope(b)
	if err != nil {
		return nil, corrupt(path, "%v", err)
	}
	if got := crcHex(data); got != sum {
		return nil, corrupt(path, "crc32c %s in the file, %s computed", sum, got)
	}
	return data, nil
}

// parseEnvelope returns the "crc32c" and the raw "data" of a checked file,
// or says why b is not one: not a single JSON object, a member missing,
// doubled or unknown, or a crc32c that is not 8 lowercase hex digits.
func parseEnvelope(b []byte) (sum string, data json.RawMessage, err error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", nil, errors.New("not a checked file (want a JSON object with crc32c and data)")
	}
	var haveSum bool
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", nil, fmt.Errorf("bad JSON: %v", err)
		}
		switch key, _ := tok.(string); {
		case key == "crc32c" && !haveSum:
			haveSum = true
			if err := dec.Decode(&sum); err != nil {
				return "", nil, fmt.Errorf("crc32c is not a string: %v", err)
			}
		case key == "data" && data == nil:
			if err := dec.Decode(&data); err != nil {
				return "", nil, fmt.Errorf("bad JSON in data: %v", err)
			}
		case key == "crc32c" || key == "data":
			return "", nil, fmt.Errorf("member %q appears twice", key)
		default:
			return "", nil, fmt.Errorf("unknown member %q (a checked file has only crc32c and data)", key)
		}
	}
	if _, err := dec.Token(); err != nil {
		return "", nil, fmt.Errorf("bad JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", nil, errors.New("more after the JSON object")
	}
	switch {
	case !haveSum:
		return "", nil, errors.New("no crc32c member")
	case data == nil:
		return "", nil, errors.New("no data member")
	case !isCRCHex(sum):
		return "", nil, fmt.Errorf("crc32c %q is not 8 lowercase hex digits", sum)
	}
	return sum, data, nil
}

func isCRCHex(s string) bool { return len(s) == 8 && isHex(s) }

// isHex reports whether s is lowercase hex digits only.
func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
