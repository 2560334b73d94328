package main

import "testing"

func TestParseByteSize(t *testing.T) {
	good := map[string]int64{
		"0": 0, "67108864": 64 << 20, "64MiB": 64 << 20, "64mib": 64 << 20, "64M": 64 << 20,
		"16 MiB": 16 << 20, "1GiB": 1 << 30, "500MB": 500e6, "2KB": 2000, "3K": 3 << 10, "7B": 7, "1TiB": 1 << 40,
	}
	for in, want := range good {
		got, err := parseByteSize(in)
		if err != nil || got != want {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1", "1.5GiB", "12XB", "9999999TiB"} {
		if n, err := parseByteSize(in); err == nil {
			t.Errorf("parseByteSize(%q) = %d, want an error", in, n)
		}
	}
	for n, want := range map[int64]string{64 << 20: "64MiB", 256 << 20: "256MiB", 1 << 30: "1GiB", 1000: "1000", 0: "0", 3 << 10: "3KiB"} {
		if got := (byteSize{&n}).String(); got != want {
			t.Errorf("String(%d) = %q, want %q", n, got, want)
		}
	}
}
