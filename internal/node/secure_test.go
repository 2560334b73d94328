package node

import (
	"slices"
	"strings"
	"testing"
)

func TestLoopbackAndExposure(t *testing.T) {
	for host, want := range map[string]bool{"127.0.0.1": true, "127.0.0.5": true, "::1": true, "localhost": true, "LocalHost": true,
		"": false, "0.0.0.0": false, "::": false, "10.0.0.1": false, "db1.example": false} {
		if got := Loopback(host); got != want {
			t.Errorf("Loopback(%q) = %v", host, got)
		}
	}
	if err := checkExposure("10.0.0.1", false, false, "hint"); err == nil || !strings.Contains(err.Error(), "--insecure") || !strings.Contains(err.Error(), "hint") {
		t.Errorf("plaintext on 10.0.0.1: %v, want a refusal naming --insecure and the hint", err)
	}
	for _, ok := range [][2]bool{{true, false}, {false, true}} {
		if err := checkExposure("10.0.0.1", ok[0], ok[1], ""); err != nil {
			t.Errorf("secure=%v insecure=%v: %v", ok[0], ok[1], err)
		}
	}
	if err := checkExposure("127.0.0.1", false, false, ""); err != nil {
		t.Errorf("loopback: %v", err)
	}
	if w := InsecureWarning("0.0.0.0", "[::]:5000", false); !strings.HasPrefix(w, "INSECURE:") || !strings.Contains(w, "[::]:5000") {
		t.Errorf("warning %q", w)
	}
	if InsecureWarning("127.0.0.1", "127.0.0.1:5000", false) != "" || InsecureWarning("10.0.0.1", "10.0.0.1:5000", true) != "" {
		t.Error("a warning for loopback or secure")
	}
	if h := certHosts("db1.example"); !slices.Contains(h, "db1.example") || !slices.Contains(h, "127.0.0.1") {
		t.Errorf("certHosts(db1.example) = %v", h)
	}
	if h := certHosts("0.0.0.0"); slices.Contains(h, "0.0.0.0") || len(h) < 3 {
		t.Errorf("certHosts(0.0.0.0) = %v, want the machine's names, not 0.0.0.0", h)
	}
}
