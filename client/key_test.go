package client

import (
	"errors"
	"testing"

	"github.com/cairndb/cairn/internal/keys"
)

func TestParseKey(t *testing.T) {
	for _, s := range []string{"/a", "/a/b/-/c", "/a%2Fb/-/%2D"} {
		k, err := ParseKey(s)
		if err != nil {
			t.Fatalf("ParseKey(%q): %v", s, err)
		}
		if k.String() != s {
			t.Errorf("ParseKey(%q).String() = %q", s, k.String())
		}
		kk, _ := keys.Parse(s)
		if !keys.Key(k).Equal(kk) || !Key(kk).Equal(k) {
			t.Errorf("client key %v and keys.Key %v differ", k, kk)
		}
	}
	for _, s := range []string{"", "a", "/a/-/b/-/c", "/%zz"} {
		_, err := ParseKey(s)
		if !errors.Is(err, ErrInvalidArgument) || !isKind(err, KindMalformedKey) {
			t.Errorf("ParseKey(%q) = %v, want a malformed_key invalid-argument error", s, err)
		}
	}
}

func TestMustParseKeyPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustParseKey(\"x\") did not panic")
		}
	}()
	MustParseKey("x")
}

func TestVersionRoundTrip(t *testing.T) {
	v := Version{0x00, 0x01, 0xab, 0xff}
	if v.String() != "0001abff" {
		t.Errorf("String() = %s", v)
	}
	got, err := ParseVersion("0001ABff")
	if err != nil || got.String() != "0001abff" {
		t.Errorf("ParseVersion = %v, %v", got, err)
	}
	for _, s := range []string{"", "0", "zz"} {
		if _, err := ParseVersion(s); !isKind(err, KindMalformedVersion) {
			t.Errorf("ParseVersion(%q) = %v, want malformed_version", s, err)
		}
	}
}
