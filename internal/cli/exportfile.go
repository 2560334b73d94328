package cli

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cairndb/cairn/client"
)

// The export file (docs/design/20261129_export_import.md): JSON Lines,
// one object per line, a header first and an end line last.
//
//	{"format":"cairn-export","version":1,"store":"kvstore","parent":"/users","started":"RFC 3339"}
//	{"key":"/users/alice/-/email","value":"alice@example.com"}
//	{"key":"/users/alice/-/photo","value_base64":"iVBO...","expiration":"RFC 3339"}
//	{"end":true,"records":2,"ended":"RFC 3339"}
const (
	exportFormat  = "cairn-export"
	exportVersion = 1
	// maxExportLine bounds one line: a record's value is at most the
	// store's max_value_bytes (1 MiB by default), so 64 MiB only stops a
	// file that is not an export from being read into memory whole.
	maxExportLine = 64 << 20
)

// exportLine is any line of the file; which fields are set says which
// kind it is.
type exportLine struct {
	Format  string `json:"format,omitempty"`
	Version int    `json:"version,omitempty"`
	Store   string `json:"store,omitempty"`
	Parent  string `json:"parent,omitempty"`
	Started string `json:"started,omitempty"`

	Key         *string `json:"key,omitempty"`
	Value       *string `json:"value,omitempty"`
	ValueBase64 *string `json:"value_base64,omitempty"`
	Expiration  string  `json:"expiration,omitempty"`

	End     bool   `json:"end,omitempty"`
	Records int64  `json:"records,omitempty"`
	Ended   string `json:"ended,omitempty"`
}

// exportEnd is the end line as written: its count even when 0.
type exportEnd struct {
	End     bool   `json:"end"`
	Records int64  `json:"records"`
	Ended   string `json:"ended"`
}

// exportRecord is a record's line.
func exportRecord(r client.Record) exportLine {
	k := r.Key.String()
	l := exportLine{Key: &k, Expiration: formatExpiration(r.Expiration)}
	l.Value, l.ValueBase64 = jsonValue(r.Value)
	return l
}

// FileError is a line of an export file that import cannot read. Its exit
// code is ExitBadInput.
type FileError struct {
	Path string // "stdin" when read from standard input
	Line int64  // 1-based; 0 for the file as a whole
	Err  error
}

func (e *FileError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("%s line %d: %v", e.Path, e.Line, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// ExitCode is ExitBadInput.
func (e *FileError) ExitCode() int { return ExitBadInput }

// importRecord is a record read from the file: what to write, and the
// line it came from.
type importRecord struct {
	line       int64
	key        client.Key
	value      []byte
	expiration time.Time // zero: never expires
}

// exportReader reads an export file line by line, checking each line and
// its place in the file.
type exportReader struct {
	path    string
	r       *bufio.Reader
	line    int64
	header  exportLine
	records int64 // record lines read
	ended   bool  // the end line was read
}

func newExportReader(path string, r io.Reader) *exportReader {
	return &exportReader{path: path, r: bufio.NewReaderSize(r, 1<<20)}
}

func (x *exportReader) fail(format string, args ...any) error {
	return &FileError{Path: x.path, Line: x.line, Err: fmt.Errorf(format, args...)}
}

// next returns the next record, or io.EOF after the end line when the
// file ends there. Any other error is a *FileError (or the read's error).
func (x *exportReader) next() (importRecord, error) {
	for {
		raw, err := x.readLine()
		if err == io.EOF {
			if x.line == 0 {
				return importRecord{}, &FileError{Path: x.path, Err: errors.New("empty: not an export file")}
			}
			if !x.ended {
				return importRecord{}, &FileError{Path: x.path, Err: fmt.Errorf("ends after %d records without its end line: the export did not finish, or the file was cut short", x.records)}
			}
			return importRecord{}, io.EOF
		}
		if err != nil {
			return importRecord{}, err
		}
		if x.ended {
			return importRecord{}, x.fail("a line after the end line")
		}
		var l exportLine
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return importRecord{}, x.fail("not a line of an export file: %v", err)
		}
		if dec.More() {
			return importRecord{}, x.fail("more than one JSON value on the line")
		}
		if x.line == 1 {
			if err := x.checkHeader(l); err != nil {
				return importRecord{}, err
			}
			continue
		}
		if l.End {
			if err := x.checkEnd(l); err != nil {
				return importRecord{}, err
			}
			continue
		}
		return x.record(l)
	}
}

// readLine returns the next line without its newline, or io.EOF.
func (x *exportReader) readLine() ([]byte, error) {
	var buf []byte
	for {
		part, err := x.r.ReadSlice('\n')
		buf = append(buf, part...)
		if len(buf) > maxExportLine {
			x.line++
			return nil, x.fail("longer than %d bytes: not an export file", maxExportLine)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(buf) == 0:
			return nil, io.EOF
		case err != nil && err != io.EOF:
			return nil, err
		}
		x.line++
		return bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte("\n")), []byte("\r")), nil
	}
}

func (x *exportReader) checkHeader(l exportLine) error {
	if l.Format != exportFormat {
		return x.fail("the first line is not a cairn export header (want {\"format\":%q,...}; was the file written by cairn kv export?)", exportFormat)
	}
	if l.Version != exportVersion {
		return x.fail("export format version %d; this cairn reads version %d", l.Version, exportVersion)
	}
	if l.Key != nil || l.End {
		return x.fail("the header holds record or end fields")
	}
	x.header = l
	return nil
}

func (x *exportReader) checkEnd(l exportLine) error {
	if l.Key != nil || l.Format != "" {
		return x.fail("the end line holds record or header fields")
	}
	if l.Records != x.records {
		return x.fail("the end line counts %d records, the file has %d: records were lost or added", l.Records, x.records)
	}
	x.ended = true
	return nil
}

func (x *exportReader) record(l exportLine) (importRecord, error) {
	if l.Key == nil {
		return importRecord{}, x.fail("no \"key\": a record line needs one")
	}
	if l.Format != "" || l.Records != 0 || l.Ended != "" {
		return importRecord{}, x.fail("a record line holds header or end fields")
	}
	k, err := client.ParseKey(*l.Key)
	if err != nil {
		return importRecord{}, x.fail("key %q: %v", *l.Key, err)
	}
	rec := importRecord{line: x.line, key: k}
	switch {
	case (l.Value == nil) == (l.ValueBase64 == nil):
		return importRecord{}, x.fail("key %s: want exactly one of \"value\" and \"value_base64\"", k)
	case l.Value != nil:
		rec.value = []byte(*l.Value)
	default:
		if rec.value, err = base64.StdEncoding.DecodeString(*l.ValueBase64); err != nil {
			return importRecord{}, x.fail("key %s: value_base64: %v", k, err)
		}
	}
	if l.Expiration != "" {
		if rec.expiration, err = time.Parse(time.RFC3339Nano, l.Expiration); err != nil {
			return importRecord{}, x.fail("key %s: expiration %q is not an RFC 3339 time", k, l.Expiration)
		}
	}
	x.records++
	return rec, nil
}
