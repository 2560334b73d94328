package clustertest

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// regInput is a porcupine operation's input.
type regInput struct {
	put   bool
	key   string
	value string // put: the value written
}

// regOutput is a get's output. A put's output is nil: a put always
// succeeds in the model, and an Unknown put's output is not observed.
type regOutput struct {
	found bool
	value string
}

// regState is one key's register: absent, or holding a value.
type regState struct {
	found bool
	value string
}

// RegisterModel is a register per key (put, get), partitioned by key. The
// states are comparable values, so porcupine's default equality applies.
var RegisterModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			k := op.Input.(regInput).key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		sort.Strings(keys)
		out := make([][]porcupine.Operation, len(keys))
		for i, k := range keys {
			out[i] = byKey[k]
		}
		return out
	},
	PartitionEvent: func(history []porcupine.Event) [][]porcupine.Event {
		byKey := map[string][]porcupine.Event{}
		keyOf := map[int]string{} // a return event's key is its call's
		var keys []string
		for _, e := range history {
			var k string
			if e.Kind == porcupine.CallEvent {
				k = e.Value.(regInput).key
				keyOf[e.Id] = k
			} else {
				k = keyOf[e.Id]
			}
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], e)
		}
		sort.Strings(keys)
		out := make([][]porcupine.Event, len(keys))
		for i, k := range keys {
			out[i] = byKey[k]
		}
		return out
	},
	Init: func() any { return regState{} },
	Step: func(state, input, output any) (bool, any) {
		st, in := state.(regState), input.(regInput)
		if in.put {
			return true, regState{found: true, value: in.value}
		}
		out := output.(regOutput)
		if out.found != st.found || (out.found && out.value != st.value) {
			return false, st
		}
		return true, st
	},
	DescribeOperation: func(input, output any) string {
		in := input.(regInput)
		if in.put {
			return fmt.Sprintf("put(%s, %q)", in.key, in.value)
		}
		out := output.(regOutput)
		if !out.found {
			return fmt.Sprintf("get(%s) -> absent", in.key)
		}
		return fmt.Sprintf("get(%s) -> %q", in.key, out.value)
	},
	DescribeState: func(state any) string {
		st := state.(regState)
		if !st.found {
			return "absent"
		}
		return fmt.Sprintf("%q", st.value)
	},
	DescribeOperationMetadata: func(info any) string {
		if info == nil {
			return ""
		}
		return info.(string)
	},
}

// Operations turns a history into porcupine operations: Failed operations
// are left out; an Unknown put returns at +infinity (math.MaxInt64) with no
// output, so it may take effect at any time after its call, or never.
func Operations(ops []Op) []porcupine.Operation {
	var out []porcupine.Operation
	for _, op := range ops {
		if op.Outcome == Failed || (op.Kind == Get && op.Outcome != OK) {
			continue
		}
		po := porcupine.Operation{ClientId: op.Client, Call: op.Call, Return: op.Return, Metadata: op.String()}
		switch op.Kind {
		case Put:
			po.Input = regInput{put: true, key: op.Key, value: op.Value}
			if op.Outcome == Unknown {
				po.Return = math.MaxInt64
			}
		case Get:
			po.Input = regInput{key: op.Key}
			po.Output = regOutput{found: op.Found, value: op.Value}
		}
		out = append(out, po)
	}
	return out
}

// CheckLinearizable checks h against RegisterModel within timeout. An
// illegal history, or a check that does not finish in time, fails the test;
// then porcupine's visualization (linearizability.html) and the history
// (history.txt) are written to the artifact directory.
func CheckLinearizable(t testing.TB, h *History, timeout time.Duration) {
	t.Helper()
	ops := h.Ops()
	pops := Operations(ops)
	start := time.Now()
	res := porcupine.CheckOperationsTimeout(RegisterModel, pops, timeout)
	took := time.Since(start)
	if res == porcupine.Ok {
		t.Logf("linearizable: %d operations checked (of %d recorded) in %v", len(pops), len(ops), took.Round(time.Millisecond))
		return
	}
	what := "NOT linearizable"
	if res == porcupine.Unknown {
		what = fmt.Sprintf("linearizability check timed out after %v (counted as a failure)", timeout)
	}
	t.Errorf("history of %d operations is %s", len(pops), what)
	WriteHistory(t, ops)
	_, info := porcupine.CheckOperationsVerbose(RegisterModel, pops, timeout)
	path := ArtifactDir(t) + "/linearizability.html"
	if err := porcupine.VisualizePath(RegisterModel, info, path); err != nil {
		t.Errorf("porcupine visualization: %v", err)
		return
	}
	t.Logf("porcupine visualization: %s", path)
}

// WriteHistory saves the history, one operation per line in call order, to
// history.txt in the artifact directory.
func WriteHistory(t testing.TB, ops []Op) {
	t.Helper()
	sorted := append([]Op(nil), ops...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Call < sorted[j].Call })
	var b bytes.Buffer
	for _, op := range sorted {
		b.WriteString(op.String())
		b.WriteByte('\n')
	}
	t.Logf("history: %s", WriteArtifact(t, "history.txt", b.Bytes()))
}

// CheckFinal checks final reads against the acknowledged writes: finals
// maps each key to an OK Get issued after every other operation on it had
// returned or given up. For each key:
//
//   - with no acknowledged put, the read may find nothing or the value of
//     an Unknown put;
//   - with acknowledged puts, it must find a value written by some put W
//     (acknowledged or Unknown) that no acknowledged put follows in real
//     time: no acknowledged put was called after W returned (an Unknown W
//     never returned). Otherwise an acknowledged write was lost.
//
// It returns a description of each violation.
func CheckFinal(ops []Op, finals map[string]Op) []string {
	type keyWrites struct {
		byValue  map[string]Op
		maxAcked int64 // the latest call of an acknowledged put
		acked    int
		latest   Op // the acknowledged put called last
	}
	writes := map[string]*keyWrites{}
	for _, op := range ops {
		if op.Kind != Put || op.Outcome == Failed {
			continue
		}
		kw := writes[op.Key]
		if kw == nil {
			kw = &keyWrites{byValue: map[string]Op{}, maxAcked: -1}
			writes[op.Key] = kw
		}
		kw.byValue[op.Value] = op
		if op.Outcome == OK {
			kw.acked++
			if op.Call > kw.maxAcked {
				kw.maxAcked, kw.latest = op.Call, op
			}
		}
	}
	var bad []string
	keys := make([]string, 0, len(finals))
	for k := range finals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f := finals[k]
		kw := writes[k]
		if kw == nil {
			kw = &keyWrites{byValue: map[string]Op{}, maxAcked: -1}
		}
		if !f.Found {
			if kw.acked > 0 {
				bad = append(bad, fmt.Sprintf("key %s: final read found nothing, but %d puts were acknowledged (the latest called: %v)", k, kw.acked, kw.latest))
			}
			continue
		}
		w, ok := kw.byValue[f.Value]
		if !ok {
			bad = append(bad, fmt.Sprintf("key %s: final read found %q, which no acknowledged or unknown-outcome put wrote", k, f.Value))
			continue
		}
		ret := w.Return
		if w.Outcome == Unknown {
			ret = math.MaxInt64
		}
		if kw.acked > 0 && ret < kw.maxAcked {
			bad = append(bad, fmt.Sprintf("key %s: final read found %q of %v, but the acknowledged %v began after that put returned: an acknowledged write was lost", k, f.Value, w, kw.latest))
		}
	}
	return bad
}

// formatLines joins lines for an error message.
func formatLines(lines []string) string { return "\n\t" + strings.Join(lines, "\n\t") }

// ReportFinal fails the test with every violation CheckFinal finds.
func ReportFinal(t testing.TB, ops []Op, finals map[string]Op) {
	t.Helper()
	if bad := CheckFinal(ops, finals); len(bad) > 0 {
		t.Errorf("%d of %d keys lost acknowledged writes:%s", len(bad), len(finals), formatLines(bad))
		WriteHistory(t, ops)
		return
	}
	t.Logf("every acknowledged write is visible: %d keys read back", len(finals))
}
