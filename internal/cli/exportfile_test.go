package cli

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/client"
)

const goodHeader = `{"format":"cairn-export","version":1,"store":"kvstore","started":"2026-11-29T10:00:00Z"}`

// TestExportReaderReadsRecords: a whole file gives its records, text and
// base64 values and expirations, then io.EOF after the end line.
func TestExportReaderReadsRecords(t *testing.T) {
	file := goodHeader + "\n" +
		`{"key":"/a/-/text","value":"héllo"}` + "\n" +
		`{"key":"/a/b/-/bin","value_base64":"AP8=","expiration":"2026-12-01T00:00:00.5Z"}` + "\r\n" +
		`{"key":"/empty","value":""}` + "\n" +
		`{"end":true,"records":3,"ended":"2026-11-29T10:00:01Z"}`
	x := newExportReader("f", strings.NewReader(file))
	var got []importRecord
	for {
		r, err := x.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if len(got) != 3 {
		t.Fatalf("%d records, want 3", len(got))
	}
	if got[0].key.String() != "/a/-/text" || string(got[0].value) != "héllo" || !got[0].expiration.IsZero() || got[0].line != 2 {
		t.Errorf("record 1: %+v", got[0])
	}
	want := time.Date(2026, 12, 1, 0, 0, 0, 5e8, time.UTC)
	if got[1].key.String() != "/a/b/-/bin" || string(got[1].value) != "\x00\xff" || !got[1].expiration.Equal(want) {
		t.Errorf("record 2: %+v", got[1])
	}
	if got[2].key.String() != "/empty" || len(got[2].value) != 0 {
		t.Errorf("record 3: %+v", got[2])
	}
}

// TestExportReaderRefusesBadFiles: each defect is named with its line,
// and is a *FileError (exit code 2).
func TestExportReaderRefusesBadFiles(t *testing.T) {
	end := func(n int) string { return `{"end":true,"records":` + string(rune('0'+n)) + `}` }
	rec := `{"key":"/a/-/b","value":"v"}`
	for _, c := range []struct {
		name, file string
		line       int64
		want       string
	}{
		{"empty", "", 0, "empty"},
		{"not json", "hello\n", 1, "not a line of an export file"},
		{"no header", rec + "\n" + end(1), 1, "not a cairn export header"},
		{"newer format", `{"format":"cairn-export","version":2}` + "\n" + end(0), 1, "version 2"},
		{"cut short", goodHeader + "\n" + rec + "\n", 0, "ends after 1 records without its end line"},
		{"count off", goodHeader + "\n" + rec + "\n" + end(2), 3, "counts 2 records, the file has 1"},
		{"after the end", goodHeader + "\n" + end(0) + "\n" + rec, 3, "after the end line"},
		{"unknown field", goodHeader + "\n" + `{"key":"/a/-/b","vlaue":"v"}` + "\n" + end(1), 2, `unknown field "vlaue"`},
		{"two values", goodHeader + "\n" + `{"key":"/a/-/b","value":"v","value_base64":"AA=="}` + "\n" + end(1), 2, "exactly one of"},
		{"no value", goodHeader + "\n" + `{"key":"/a/-/b"}` + "\n" + end(1), 2, "exactly one of"},
		{"no key", goodHeader + "\n" + `{"value":"v"}` + "\n" + end(1), 2, `no "key"`},
		{"bad key", goodHeader + "\n" + `{"key":"a/-/b","value":"v"}` + "\n" + end(1), 2, `key "a/-/b"`},
		{"bad base64", goodHeader + "\n" + `{"key":"/a/-/b","value_base64":"!!"}` + "\n" + end(1), 2, "value_base64"},
		{"bad expiration", goodHeader + "\n" + `{"key":"/a/-/b","value":"v","expiration":"tomorrow"}` + "\n" + end(1), 2, "not an RFC 3339 time"},
		{"two objects", goodHeader + "\n" + rec + rec + "\n" + end(1), 2, "more than one JSON value"},
		{"header fields in a record", goodHeader + "\n" + `{"key":"/a/-/b","value":"v","format":"x"}` + "\n" + end(1), 2, "header or end fields"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := checkExport(newExportReader("f.jsonl", strings.NewReader(c.file)), nil)
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("err %v (%T), want a *FileError", err, err)
			}
			if fe.Line != c.line || !strings.Contains(err.Error(), c.want) || ExitCode(err) != ExitBadInput {
				t.Fatalf("err %q at line %d (exit %d), want line %d saying %q, exit %d", err, fe.Line, ExitCode(err), c.line, c.want, ExitBadInput)
			}
		})
	}
}

// TestExportRecordLine: a record's line carries no version, a text value
// as text and any other as base64, and its expiration when it has one.
func TestExportRecordLine(t *testing.T) {
	exp := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	l := exportRecord(client.Record{Key: client.MustParseKey("/a/-/b"), Value: []byte{0xff}, Version: client.Version{1}, Expiration: exp})
	if *l.Key != "/a/-/b" || l.Value != nil || *l.ValueBase64 != "/w==" || l.Expiration != "2026-12-01T00:00:00Z" {
		t.Fatalf("line %+v", l)
	}
	l = exportRecord(client.Record{Key: client.MustParseKey("/a"), Value: []byte("text")})
	if *l.Value != "text" || l.ValueBase64 != nil || l.Expiration != "" {
		t.Fatalf("line %+v", l)
	}
}
