package keys

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

var small = Limits{MaxKeyBytes: 10, MaxValueBytes: 5, MaxComponents: 3}

// checkLimitError fails unless err is a *LimitError for limit with the given
// sizes, wraps ErrLimit, and names the limit and both sizes in its message.
func checkLimitError(t *testing.T, what string, err error, limit string, max, seen int) {
	t.Helper()
	var le *LimitError
	if !errors.As(err, &le) {
		t.Errorf("%s: error %v is not a *LimitError", what, err)
		return
	}
	if le.Limit != limit || le.Max != max || le.Seen != seen {
		t.Errorf("%s: got %+v, want {Limit:%s Max:%d Seen:%d}", what, *le, limit, max, seen)
	}
	if !errors.Is(err, ErrLimit) {
		t.Errorf("%s: error %v does not wrap ErrLimit", what, err)
	}
	msg := err.Error()
	for _, s := range []string{limit, "--" + strings.ReplaceAll(limit, "_", "-"), grouped(max), grouped(seen)} {
		if !strings.Contains(msg, s) {
			t.Errorf("%s: message %q does not mention %q", what, msg, s)
		}
	}
}

func TestLimitErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		err  LimitError
		want string
	}{
		{LimitError{"max_value_bytes", 4194304, 5000000}, "value is 5,000,000 bytes; the store's limit max_value_bytes is 4,194,304 (the node's --max-value-bytes)"},
		{LimitError{"max_key_bytes", 10240, 10241}, "key is 10,241 bytes; the store's limit max_key_bytes is 10,240 (the node's --max-key-bytes)"},
		{LimitError{"max_components", 64, 65}, "key has 65 components; the store's limit max_components is 64 (the node's --max-components)"},
		{LimitError{"max_value_bytes", 5, 999}, "value is 999 bytes; the store's limit max_value_bytes is 5 (the node's --max-value-bytes)"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.err, got, tc.want)
		}
	}
	for n, want := range map[int]string{0: "0", 100: "100", 1000: "1,000", 123456: "123,456", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := grouped(n); got != want {
			t.Errorf("grouped(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCheckKeyLimits(t *testing.T) {
	for _, tc := range []struct {
		k           Key
		limit       string
		max, seen   int
		description string
	}{
		{New([]string{"a"}, "b", "c", "d"), "max_components", 3, 4, "four components"},
		{New([]string{"a", "b", "c", "d"}), "max_components", 3, 4, "four major components"},
		{New([]string{"x", "y"}, "z", "w"), "max_components", 3, 4, "four one-byte components"},
		{New([]string{"01234567890"}), "max_key_bytes", 10, 11, "11 bytes in one component"},
		{New([]string{"0123"}, "4567", "890"), "max_key_bytes", 10, 11, "11 bytes over three components"},
		{New([]string{"é"}, "日本", "abc"), "max_key_bytes", 10, 11, "multi-byte runes count as bytes"},
	} {
		checkLimitError(t, tc.description, small.CheckKey(tc.k), tc.limit, tc.max, tc.seen)
		checkLimitError(t, tc.description+" (parent)", small.CheckParent(tc.k), tc.limit, tc.max, tc.seen)
	}
}

func TestCheckKeyEmptyComponent(t *testing.T) {
	for _, k := range []Key{
		New([]string{""}),
		New([]string{"a", ""}),
		New([]string{"a"}, ""),
		New([]string{"a"}, "b", ""),
	} {
		if err := small.CheckKey(k); !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckKey(%#v) = %v, want ErrInvalid", k, err)
		}
		if err := small.CheckParent(k); !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckParent(%#v) = %v, want ErrInvalid", k, err)
		}
	}
}

func TestCheckKeyAtLimit(t *testing.T) {
	for _, k := range []Key{
		New([]string{"a"}),
		New([]string{"a"}, "b", "c"),
		New([]string{"0123456789"}),
		New([]string{"0123"}, "4567", "89"),
		New([]string{"é"}, "日本", "ab"),
	} {
		if err := small.CheckKey(k); err != nil {
			t.Errorf("CheckKey(%q): %v", k, err)
		}
		if err := small.CheckParent(k); err != nil {
			t.Errorf("CheckParent(%q): %v", k, err)
		}
	}
}

func TestCheckKeyInvalid(t *testing.T) {
	for _, k := range []Key{
		{},
		{Major: []string{}},
		New(nil, "a"),
		New([]string{"\xff"}),
		New([]string{"a"}, "b\xc3"),
	} {
		if err := small.CheckKey(k); !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckKey(%#v) = %v, want ErrInvalid", k, err)
		}
	}
}

// TestCheckUTF8 checks that the error names the component that is not
// valid UTF-8 and prints it as valid UTF-8.
func TestCheckUTF8(t *testing.T) {
	for _, tc := range []struct {
		k    Key
		want string // "" for a valid key
	}{
		{New([]string{"a", "日本"}, "é"), ""},
		{Key{}, ""},
		{New([]string{"\xff"}), `major component 0 is not valid UTF-8 ("\xff")`},
		{New([]string{"a", "b\xc3"}, "\xff"), `major component 1 is not valid UTF-8 ("b\xc3")`},
		{New([]string{"a"}, "b", "\xed\xa0\x80"), `minor component 1 is not valid UTF-8 ("\xed\xa0\x80")`},
	} {
		err := tc.k.CheckUTF8()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%#v.CheckUTF8() = %v, want nil", tc.k, err)
		case tc.want == "":
		case !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want):
			t.Errorf("%#v.CheckUTF8() = %v, want ErrInvalid mentioning %s", tc.k, err, tc.want)
		case !utf8.ValidString(err.Error()):
			t.Errorf("%#v.CheckUTF8() = %q, which is not valid UTF-8", tc.k, err)
		}
		if tc.want != "" {
			if err := small.CheckKey(tc.k); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckKey(%#v) = %v, want ErrInvalid mentioning %s", tc.k, err, tc.want)
			}
		}
	}
}

func TestCheckParent(t *testing.T) {
	if err := small.CheckParent(Key{}); err != nil {
		t.Errorf("CheckParent(empty key) = %v, want nil (the whole store)", err)
	}
	for _, k := range []Key{
		New(nil, "a"),
		New([]string{"\xff"}),
	} {
		if err := small.CheckParent(k); !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckParent(%#v) = %v, want ErrInvalid", k, err)
		}
	}
}

func TestCheckValue(t *testing.T) {
	for _, n := range []int{0, 1, 5} {
		if err := small.CheckValue(make([]byte, n)); err != nil {
			t.Errorf("CheckValue(%d bytes) = %v, want nil", n, err)
		}
	}
	checkLimitError(t, "6-byte value", small.CheckValue(make([]byte, 6)), "max_value_bytes", 5, 6)
	checkLimitError(t, "1000-byte value", small.CheckValue(make([]byte, 1000)), "max_value_bytes", 5, 1000)
}

func TestLimitsValidate(t *testing.T) {
	if err := DefaultLimits().Validate(); err != nil {
		t.Errorf("DefaultLimits().Validate() = %v", err)
	}
	d := DefaultLimits()
	if d.MaxKeyBytes != 10<<10 || d.MaxValueBytes != 4<<20 || d.MaxComponents != 64 {
		t.Errorf("DefaultLimits() = %+v, want the documented 10 KiB, 4 MiB, 64", d)
	}
	for _, l := range []Limits{
		{},
		{MaxKeyBytes: 0, MaxValueBytes: 1, MaxComponents: 1},
		{MaxKeyBytes: 1, MaxValueBytes: -1, MaxComponents: 1},
		{MaxKeyBytes: 1, MaxValueBytes: 1, MaxComponents: 0},
	} {
		if err := l.Validate(); err == nil {
			t.Errorf("%+v.Validate() = nil, want an error", l)
		}
	}
}
