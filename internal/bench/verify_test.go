package bench

import (
	"strings"
	"testing"
)

func TestVerifyCells(t *testing.T) {
	key := []byte("user1")
	good := func(name string) Field {
		return Field{Name: name, Value: appendDeterministic(nil, key, name, 100)}
	}
	bad := good("field9")
	bad.Value = append([]byte("random data that is not it"), bad.Value[26:]...)
	for _, tc := range []struct {
		name  string
		cells []Field
		want  int
		st    Status
		why   []string // in the sentence
	}{
		{"all fields right", []Field{good("field0"), good("field9")}, 2, StatusOK, nil},
		{"no fields", nil, 2, StatusError, []string{"no fields came back"}},
		{"a field missing", []Field{good("field0")}, 2, StatusUnexpectedState, []string{"1 fields came back, want 2"}},
		{"field9 differs", []Field{good("field0"), bad}, 2, StatusUnexpectedState,
			[]string{"field field9 differs: expected ", ` found "random data that is not "... (100 bytes)`, "dataintegrity=true"}},
	} {
		st, why, _ := verifyCells(key, tc.cells, tc.want, 100, nil)
		if st != tc.st {
			t.Errorf("%s: status %v, want %v", tc.name, st, tc.st)
		}
		for _, w := range tc.why {
			if !strings.Contains(why, w) {
				t.Errorf("%s: %q does not say %q", tc.name, why, w)
			}
		}
		if tc.why == nil && why != "" {
			t.Errorf("%s: %q, want no sentence", tc.name, why)
		}
	}
}
