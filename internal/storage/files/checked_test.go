package files

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// sample stands for the files Cairn keeps: strings, numbers, maps, lists.
type sample struct {
	Store   string            `json:"store"`
	SN      uint64            `json:"sn"`
	Peers   map[string]string `json:"peers,omitempty"`
	Stopped []uint64          `json:"stopped,omitempty"`
	Admin   bool              `json:"admin,omitempty"`
}

var want = sample{Store: "kvstore", SN: 2, Peers: map[string]string{"1": "127.0.0.1:5000"}, Stopped: []uint64{3}, Admin: true}

// wantFile is want as a checked file, byte for byte.
const wantFile = `{
  "crc32c": "%s",
  "data": {
    "store": "kvstore",
    "sn": 2,
    "peers": {
      "1": "127.0.0.1:5000"
    },
    "stopped": [
      3
    ],
    "admin": true
  }
}
`

// writeRaw puts b at path on a new MemFS.
func writeRaw(t testing.TB, path string, b []byte) FS {
	t.Helper()
	fs := vfs.NewMem()
	if err := fs.MkdirAll(fs.PathDir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(bytes.Clone(b)); err != nil { // MemFS scribbles over it in race builds
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestWriteJSONFormat: the file is the envelope of the package doc,
// indented, newline-terminated, and its sum is over the data's bytes.
func TestWriteJSONFormat(t *testing.T) {
	fs := vfs.NewMem()
	if err := WriteJSON(fs, "/m.json", want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(fs, "/m.json")
	if err != nil {
		t.Fatal(err)
	}
	data := got[strings.Index(string(got), `"data": `)+len(`"data": `) : len(got)-len("\n}\n")]
	if exp := strings.Replace(wantFile, "%s", crcHex(data), 1); string(got) != exp {
		t.Fatalf("file:\n%s\nwant:\n%s", got, exp)
	}
	var jq struct{ Data sample } // what jq .data shows
	if err := json.Unmarshal(got, &jq); err != nil || !reflect.DeepEqual(jq.Data, want) {
		t.Fatalf(".data = %+v, %v", jq.Data, err)
	}
	var back sample
	if err := ReadJSON(fs, "/m.json", &back); err != nil || !reflect.DeepEqual(back, want) {
		t.Fatalf("ReadJSON = %+v, %v", back, err)
	}
}

// TestReadJSONRefuses: everything that is not a whole, matching checked
// file is ErrCorrupt naming the file and the problem; errors of the FS are
// not ErrCorrupt.
func TestReadJSONRefuses(t *testing.T) {
	good, err := encodeChecked(want)
	if err != nil {
		t.Fatal(err)
	}
	sum := crcHex([]byte(`"x"`))
	withData := func(data string) string {
		return `{"crc32c": "` + crcHex([]byte(data)) + `", "data": ` + data + `}`
	}
	for _, tc := range []struct {
		name string
		file string
		want string // in the error
	}{
		{"empty", "", "not a checked file"},
		{"not JSON", "hello", "not a checked file"},
		{"an array", `[{"crc32c": "` + sum + `", "data": "x"}]`, "not a checked file"},
		{"null", "null", "not a checked file"},
		{"a string", `"x"`, "not a checked file"},
		{"unchecked legacy form", `{"store": "kvstore", "sn": 2}`, `unknown member "store"`},
		{"no crc32c", `{"data": "x"}`, "no crc32c member"},
		{"no data", `{"crc32c": "` + sum + `"}`, "no data member"},
		{"unknown member", `{"crc32c": "` + sum + `", "data": "x", "extra": 1}`, `unknown member "extra"`},
		{"member name in other case", `{"CRC32C": "` + sum + `", "data": "x"}`, `unknown member "CRC32C"`},
		{"data twice", `{"crc32c": "` + sum + `", "data": "x", "data": "x"}`, `member "data" appears twice`},
		{"crc32c twice", `{"crc32c": "` + sum + `", "crc32c": "` + sum + `", "data": "x"}`, `member "crc32c" appears twice`},
		{"crc32c a number", `{"crc32c": 12345678, "data": "x"}`, "crc32c is not a string"},
		{"crc32c short", `{"crc32c": "1234567", "data": "x"}`, `crc32c "1234567" is not 8 lowercase hex digits`},
		{"crc32c upper case", `{"crc32c": "` + strings.ToUpper(crcHex([]byte(`"xyz"`))) + `", "data": "xyz"}`, "not 8 lowercase hex digits"},
		{"checksum mismatch", `{"crc32c": "` + sum + `", "data": "y"}`, "crc32c " + sum + " in the file, " + crcHex([]byte(`"y"`)) + " computed"},
		{"whitespace in data changed", strings.Replace(string(good), `"sn": 2`, `"sn":  2`, 1), " computed"},
		{"more after the object", string(good) + "{}", "more after the JSON object"},
		{"truncated", string(good[:len(good)/2]), "bad JSON"},
		{"no closing brace", strings.TrimSuffix(string(good), "}\n"), "bad JSON"},
		{"data of another type", withData(`"a string"`), "does not decode into a *files.sample"},
		{"data with a field of another type", withData(`{"sn": "two"}`), "does not decode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := writeRaw(t, "/r/m.json", []byte(tc.file))
			var got sample
			err := ReadJSON(fs, "/r/m.json", &got)
			if !errors.Is(err, ErrCorrupt) || !strings.HasPrefix(err.Error(), "/r/m.json is corrupt: ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrCorrupt naming /r/m.json with %q", err, tc.want)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		err := ReadJSON(vfs.NewMem(), "/r/m.json", &sample{})
		if !IsNotExist(err) || errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "/r/m.json") {
			t.Fatalf("got %v, want a not-exist error naming the file", err)
		}
	})
	t.Run("missing file on disk", func(t *testing.T) {
		path := t.TempDir() + "/m.json"
		err := ReadJSON(Default, path, &sample{})
		if !IsNotExist(err) || errors.Is(err, ErrCorrupt) || strings.Count(err.Error(), path) != 1 {
			t.Fatalf("got %v, want a not-exist error naming the file once", err)
		}
	})
	t.Run("read error", func(t *testing.T) {
		fs, err := WithFaults(writeRaw(t, "/r/m.json", good), "op=read,path=m.json")
		if err != nil {
			t.Fatal(err)
		}
		err = ReadJSON(fs, "/r/m.json", &sample{})
		if !errors.Is(err, syscall.EIO) || errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "/r/m.json") {
			t.Fatalf("got %v, want EIO naming the file, not ErrCorrupt", err)
		}
	})
	t.Run("not a pointer", func(t *testing.T) {
		err := ReadJSON(writeRaw(t, "/r/m.json", good), "/r/m.json", sample{})
		if err == nil || errors.Is(err, ErrCorrupt) {
			t.Fatalf("got %v, want a programming error, not ErrCorrupt", err)
		}
	})
}

// TestEveryByteChange replaces each byte of a checked file by each other
// value in turn: every result is refused as corrupt or, for whitespace
// outside the data, reads back as the same value.
func TestEveryByteChange(t *testing.T) {
	good, err := encodeChecked(want)
	if err != nil {
		t.Fatal(err)
	}
	dataStart := bytes.Index(good, []byte(`"data": `)) + len(`"data": `)
	dataEnd := len(good) - len("\n}\n")
	fs := vfs.NewMem()
	accepted := 0
	for i := range good {
		for v := range 256 {
			if byte(v) == good[i] {
				continue
			}
			b := bytes.Clone(good)
			b[i] = byte(v)
			if err := WriteAtomic(fs, "/m.json", b); err != nil {
				t.Fatal(err)
			}
			var got sample
			err := ReadJSON(fs, "/m.json", &got)
			switch {
			case err != nil && !errors.Is(err, ErrCorrupt):
				t.Fatalf("byte %d = %#x: %v, want ErrCorrupt", i, v, err)
			case err == nil && !reflect.DeepEqual(got, want):
				t.Fatalf("byte %d = %#x read back as %+v, want %+v or ErrCorrupt", i, v, got, want)
			case err == nil && (i >= dataStart && i < dataEnd || !isSpace(good[i]) || !isSpace(byte(v))):
				t.Fatalf("byte %d (%q) = %q was accepted: only whitespace outside data may change", i, good[i], byte(v))
			case err == nil:
				accepted++
			}
		}
	}
	if accepted == 0 {
		t.Fatal("no whitespace change was accepted: the test changes nothing it should")
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
