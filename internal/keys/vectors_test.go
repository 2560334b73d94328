package keys

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// The shared key vectors (api/testdata/keys.json) are read by this test and
// by the Python client's tests (clients/python/tests/test_keys.py), so both
// print, parse, hash and partition keys alike. Regenerate them after a
// deliberate change with: go test ./internal/keys -run TestSharedVectors -update
var update = flag.Bool("update", false, "rewrite api/testdata/keys.json from this package")

const vectorsFile = "../../api/testdata/keys.json"

type keyVector struct {
	Text  string   `json:"text"` // the canonical string form
	Major []string `json:"major"`
	Minor []string `json:"minor"`
	// Hash is Hash(Major) in decimal (a JSON number would lose bits).
	Hash string `json:"hash"`
	// Partitions maps a partition count to PartitionOf(Hash, count).
	Partitions map[string]uint32 `json:"partitions"`
}

type parseVector struct {
	Input string `json:"input"`
	Text  string `json:"text,omitempty"` // the canonical form; empty when Parse refuses Input
}

type vectors struct {
	Comment string        `json:"comment"`
	Keys    []keyVector   `json:"keys"`
	Parse   []parseVector `json:"parse"`
}

var vectorPartitionCounts = []uint32{1, 2, 7, 100, 1000, 65536}

func buildVectors() vectors {
	ks := []Key{
		New([]string{"users", "alice"}, "email"),
		New([]string{"users"}),
		New([]string{"a"}, "b", "c"),
		New([]string{"-"}, "-"),
		New([]string{"a/b", "100%"}),
		New([]string{"a\x00b"}),
		New([]string{"a", "b"}),
		New([]string{"tab\there", "del\x7f"}),
		New([]string{"héllo", "日本"}, "émoji 🙂"),
		New([]string{"--", "-x", "x-"}, "a-b"),
		New([]string{"user", "0000000042"}, "field3"),
		New([]string{"a long component that is longer than sixty-four bytes, so the hash sees a long input"}),
	}
	for i := range 20 {
		ks = append(ks, New([]string{"k", strconv.Itoa(i)}))
	}
	v := vectors{Comment: "Cairn key vectors: string form, xxhash64 of the major path (decimal), partition per count. " +
		"Read by internal/keys (Go), clients/python/tests and clients/java. A parse entry without text is refused. Regenerate: go test ./internal/keys -run TestSharedVectors -update"}
	for _, k := range ks {
		h := Hash(k.Major)
		kv := keyVector{Text: k.String(), Major: k.Major, Minor: k.Minor, Hash: strconv.FormatUint(h, 10),
			Partitions: map[string]uint32{}}
		if kv.Minor == nil {
			kv.Minor = []string{}
		}
		for _, n := range vectorPartitionCounts {
			kv.Partitions[strconv.Itoa(int(n))] = uint32(PartitionOf(h, n))
		}
		v.Keys = append(v.Keys, kv)
	}
	for _, in := range []string{
		"/users/alice/-/email", "/a/%2D/-/%2d", "/a/%2f%25", "/a/%e6%97%a5", "/a//b", "/a/-",
		"", "a/b", "/-/a", "/a/-/b/-/c", "/a/%2", "/a/%zz", "/a/%ff", "/", "/a/-/", "//", "/a/",
	} {
		pv := parseVector{Input: in}
		if k, err := Parse(in); err == nil {
			pv.Text = k.String()
		}
		v.Parse = append(v.Parse, pv)
	}
	return v
}

func TestSharedVectors(t *testing.T) {
	want := buildVectors()
	if *update {
		b, err := json.MarshalIndent(want, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.FromSlash(vectorsFile), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.FromSlash(vectorsFile))
	if err != nil {
		t.Fatal(err)
	}
	var got vectors
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Keys) == 0 || len(got.Parse) == 0 {
		t.Fatal("no vectors")
	}
	for _, kv := range got.Keys {
		k := New(kv.Major, kv.Minor...)
		if s := k.String(); s != kv.Text {
			t.Errorf("%q: String() = %q", kv.Text, s)
		}
		p, err := Parse(kv.Text)
		if err != nil || !slices.Equal(p.Major, k.Major) || !slices.Equal(p.Minor, k.Minor) {
			t.Errorf("Parse(%q) = %v, %v", kv.Text, p, err)
		}
		h := Hash(k.Major)
		if s := strconv.FormatUint(h, 10); s != kv.Hash {
			t.Errorf("%q: hash %s, file says %s", kv.Text, s, kv.Hash)
		}
		for n, p := range kv.Partitions {
			c, _ := strconv.Atoi(n)
			if got := uint32(PartitionOf(h, uint32(c))); got != p {
				t.Errorf("%q: partition of %d = %d, file says %d", kv.Text, c, got, p)
			}
		}
	}
	for _, pv := range got.Parse {
		k, err := Parse(pv.Input)
		switch {
		case pv.Text == "" && err == nil:
			t.Errorf("Parse(%q) = %v, file says it is refused", pv.Input, k)
		case pv.Text != "" && err != nil:
			t.Errorf("Parse(%q): %v, file says %q", pv.Input, err, pv.Text)
		case pv.Text != "" && k.String() != pv.Text:
			t.Errorf("Parse(%q).String() = %q, file says %q", pv.Input, k.String(), pv.Text)
		}
	}
}
