package clustertest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

func put(client int, key, value string, call, ret int64, o Outcome) Op {
	return Op{Client: client, Kind: Put, Key: key, Value: value, Call: call, Return: ret, Outcome: o}
}

func get(client int, key, value string, found bool, call, ret int64) Op {
	return Op{Client: client, Kind: Get, Key: key, Value: value, Found: found, Call: call, Return: ret, Outcome: OK}
}

func TestRegisterModel(t *testing.T) {
	tests := []struct {
		name string
		ops  []Op
		want porcupine.CheckResult
	}{
		{"empty read", []Op{get(0, "a", "", false, 0, 1)}, porcupine.Ok},
		{"read after put", []Op{put(0, "a", "1", 0, 1, OK), get(1, "a", "1", true, 2, 3)}, porcupine.Ok},
		{"stale read after acknowledged put", []Op{put(0, "a", "1", 0, 1, OK), get(1, "a", "", false, 2, 3)}, porcupine.Illegal},
		{"concurrent read may miss the put", []Op{put(0, "a", "1", 0, 5, OK), get(1, "a", "", false, 1, 2)}, porcupine.Ok},
		{"read of a value never written", []Op{get(0, "a", "9", true, 0, 1)}, porcupine.Illegal},
		{"failed put is left out", []Op{put(0, "a", "1", 0, 1, Failed), get(1, "a", "1", true, 2, 3)}, porcupine.Illegal},
		{"unknown put may take effect late", []Op{
			put(0, "a", "1", 0, 1, Unknown), get(1, "a", "", false, 2, 3), get(1, "a", "1", true, 4, 5)}, porcupine.Ok},
		{"unknown put may never take effect", []Op{
			put(0, "a", "1", 0, 1, Unknown), get(1, "a", "", false, 10, 11)}, porcupine.Ok},
		{"unknown put cannot take effect before its call", []Op{
			get(1, "a", "1", true, 0, 1), put(0, "a", "1", 2, 3, Unknown)}, porcupine.Illegal},
		{"a value cannot come back", []Op{
			put(0, "a", "1", 0, 1, OK), put(0, "a", "2", 2, 3, OK), get(1, "a", "2", true, 4, 5), get(1, "a", "1", true, 6, 7)}, porcupine.Illegal},
		{"keys are independent", []Op{
			put(0, "a", "1", 0, 1, OK), get(1, "b", "", false, 2, 3), get(1, "a", "1", true, 4, 5)}, porcupine.Ok},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := porcupine.CheckOperationsTimeout(RegisterModel, Operations(tt.ops), 5*time.Second)
			if got != tt.want {
				t.Errorf("check = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCheckFinal(t *testing.T) {
	tests := []struct {
		name   string
		ops    []Op
		finals map[string]Op
		want   string // substring of the one violation; "" for none
	}{
		{"latest acknowledged", []Op{put(0, "a", "1", 0, 1, OK), put(0, "a", "2", 2, 3, OK)},
			map[string]Op{"a": get(0, "a", "2", true, 10, 11)}, ""},
		{"older acknowledged value", []Op{put(0, "a", "1", 0, 1, OK), put(0, "a", "2", 2, 3, OK)},
			map[string]Op{"a": get(0, "a", "1", true, 10, 11)}, "acknowledged write was lost"},
		{"concurrent puts either wins", []Op{put(0, "a", "1", 0, 5, OK), put(1, "a", "2", 2, 3, OK)},
			map[string]Op{"a": get(0, "a", "1", true, 10, 11)}, ""},
		{"later unknown put", []Op{put(0, "a", "1", 0, 1, OK), put(0, "a", "2", 2, 3, Unknown)},
			map[string]Op{"a": get(0, "a", "2", true, 10, 11)}, ""},
		{"earlier unknown put may win", []Op{put(0, "a", "2", 0, 1, Unknown), put(0, "a", "1", 2, 3, OK)},
			map[string]Op{"a": get(0, "a", "2", true, 10, 11)}, ""},
		{"lost key", []Op{put(0, "a", "1", 0, 1, OK)},
			map[string]Op{"a": get(0, "a", "", false, 10, 11)}, "found nothing"},
		{"unknown only, absent", []Op{put(0, "a", "1", 0, 1, Unknown)},
			map[string]Op{"a": get(0, "a", "", false, 10, 11)}, ""},
		{"failed put visible", []Op{put(0, "a", "1", 0, 1, Failed)},
			map[string]Op{"a": get(0, "a", "1", true, 10, 11)}, "no acknowledged or unknown-outcome put wrote"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := CheckFinal(tt.ops, tt.finals)
			switch {
			case tt.want == "" && len(bad) > 0:
				t.Errorf("violations %q, want none", bad)
			case tt.want != "" && (len(bad) != 1 || !strings.Contains(bad[0], tt.want)):
				t.Errorf("violations %q, want one containing %q", bad, tt.want)
			}
		})
	}
}

// recordingTB is a testing.TB whose Errorf is recorded instead of failing.
type recordingTB struct {
	testing.TB
	errs []string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestCheckLinearizableWritesVisualization(t *testing.T) {
	t.Setenv("CAIRN_ARTIFACTS", t.TempDir())
	h := NewHistory()
	for _, op := range []Op{put(0, "a", "1", 0, 1, OK), put(0, "a", "2", 2, 3, OK), get(1, "a", "1", true, 4, 5)} {
		h.Add(op)
	}
	r := &recordingTB{TB: t}
	CheckLinearizable(r, h, 5*time.Second)
	if len(r.errs) == 0 || !strings.Contains(r.errs[0], "NOT linearizable") {
		t.Fatalf("errors %q, want one saying NOT linearizable", r.errs)
	}
	for _, name := range []string{"linearizability.html", "history.txt"} {
		b, err := os.ReadFile(filepath.Join(ArtifactDir(t), name))
		if err != nil || len(b) == 0 {
			t.Errorf("artifact %s: %d bytes, %v", name, len(b), err)
		}
	}
}
