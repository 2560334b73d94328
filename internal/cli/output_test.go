package cli

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/cairndb/cairn/client"
)

func TestTextLine(t *testing.T) {
	k := client.MustParseKey("/u/-/a%2Fb")
	for _, tc := range []struct {
		value    string
		keysOnly bool
		want     string
	}{
		{"hello world", false, "/u/-/a%2Fb\thello world"},
		{"", false, "/u/-/a%2Fb\t"},
		{"héllo 日本", false, "/u/-/a%2Fb\théllo 日本"},
		{"a\tb", false, "/u/-/a%2Fb\t\"a\\tb\""},
		{"line\n", false, "/u/-/a%2Fb\t\"line\\n\""},
		{"\x00\x01", false, "/u/-/a%2Fb\t\"\\x00\\x01\""},
		{"\xff\xfe", false, "/u/-/a%2Fb\t\"\\xff\\xfe\""},
		{"\u200b", false, "/u/-/a%2Fb\t\"\\u200b\""}, // zero-width space: not printable
		{"anything", true, "/u/-/a%2Fb"},
	} {
		got := TextLine(client.Record{Key: k, Value: []byte(tc.value)}, tc.keysOnly)
		if got != tc.want {
			t.Errorf("TextLine(%q, %v) = %q, want %q", tc.value, tc.keysOnly, got, tc.want)
		}
	}
}

func TestToJSON(t *testing.T) {
	k := client.MustParseKey("/u/-/a")
	exp := time.UnixMilli(1700000000123)
	for _, tc := range []struct {
		rec      client.Record
		keysOnly bool
		want     string
	}{
		{client.Record{Key: k, Value: []byte("text"), Version: client.Version{0xab}},
			false, `{"key":"/u/-/a","value":"text","version":"ab"}`},
		{client.Record{Key: k, Value: []byte{}, Version: client.Version{1}},
			false, `{"key":"/u/-/a","value":"","version":"01"}`},
		{client.Record{Key: k, Value: []byte{0xff, 0x00}, Version: client.Version{1}},
			false, `{"key":"/u/-/a","value_base64":"/wA=","version":"01"}`},
		{client.Record{Key: k, Value: []byte("x"), Version: client.Version{1}, Expiration: exp},
			false, `{"key":"/u/-/a","value":"x","version":"01","expiration":"2023-11-14T22:13:20.123Z"}`},
		{client.Record{Key: k, Value: []byte("x"), Version: client.Version{1}},
			true, `{"key":"/u/-/a"}`},
	} {
		b, err := json.Marshal(ToJSON(tc.rec, tc.keysOnly))
		if err != nil || string(b) != tc.want {
			t.Errorf("ToJSON(%+v) = %s, %v; want %s", tc.rec, b, err, tc.want)
		}
	}
}

func TestJSONArray(t *testing.T) {
	for _, n := range []int{0, 1, 3} {
		var buf bytes.Buffer
		a := &jsonArray{w: &buf}
		for i := range n {
			a.add(map[string]int{"i": i})
		}
		if err := a.close(); err != nil {
			t.Fatal(err)
		}
		var got []map[string]int
		if err := json.Unmarshal(buf.Bytes(), &got); err != nil || len(got) != n {
			t.Errorf("%d elements: output %q parses to %v, %v", n, buf.String(), got, err)
		}
	}
}
