package model

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
)

// The Check functions compare a server's response with the Model's and
// return an error describing the first difference. Bytes compare with
// bytes.Equal: proto3 does not tell nil from empty.

// CheckResult compares one write operation's result.
func CheckResult(got *cairnpb.OperationResult, want Result) error {
	if got == nil {
		return fmt.Errorf("no result, want %s", FormatResult(want))
	}
	bad := func(field string) error {
		return fmt.Errorf("%s differs: got %s, want %s", field, FormatPB(got), FormatResult(want))
	}
	switch {
	case got.GetSuccess() != want.Success:
		return bad("success")
	case want.Put && want.Success && len(got.GetNewVersion()) == 0:
		return bad("new_version (missing for a successful put)")
	case !(want.Put && want.Success) && len(got.GetNewVersion()) != 0:
		return bad("new_version (set for a failed put or a delete)")
	case got.GetPreviousExists() != want.PreviousExists:
		return bad("previous_exists")
	case !bytes.Equal(got.GetPreviousValue(), want.PreviousValue):
		return bad("previous_value")
	case want.AnyPreviousVersion && len(got.GetPreviousVersion()) == 0:
		return bad("previous_version (missing)")
	case !want.AnyPreviousVersion && !bytes.Equal(got.GetPreviousVersion(), want.PreviousVersion):
		return bad("previous_version")
	case !want.PreviousExpiry.Contains(got.GetPreviousExpirationMs()):
		return bad("previous_expiration_ms")
	}
	return nil
}

// CheckExecute compares an execute's response.
func CheckExecute(got *cairnpb.ExecuteResponse, want ExecuteResult) error {
	if got.GetCommitted() != want.Committed {
		return fmt.Errorf("committed = %v, want %v (server failed_index %d failed_result %s; model failed_index %d failed %s)",
			got.GetCommitted(), want.Committed, got.GetFailedIndex(), FormatPB(got.GetFailedResult()), want.FailedIndex, FormatResult(want.Failed))
	}
	if !want.Committed {
		if len(got.GetResults()) != 0 {
			return fmt.Errorf("aborted execute returned %d results", len(got.GetResults()))
		}
		if int(got.GetFailedIndex()) != want.FailedIndex {
			return fmt.Errorf("failed_index = %d, want %d", got.GetFailedIndex(), want.FailedIndex)
		}
		if err := CheckResult(got.GetFailedResult(), want.Failed); err != nil {
			return fmt.Errorf("failed_result: %w", err)
		}
		return nil
	}
	if got.GetFailedIndex() != 0 || got.GetFailedResult() != nil {
		return fmt.Errorf("committed execute has failed_index %d, failed_result %s", got.GetFailedIndex(), FormatPB(got.GetFailedResult()))
	}
	if len(got.GetResults()) != len(want.Results) {
		return fmt.Errorf("%d results, want %d", len(got.GetResults()), len(want.Results))
	}
	for i, r := range got.GetResults() {
		if err := CheckResult(r, want.Results[i]); err != nil {
			return fmt.Errorf("result %d: %w", i, err)
		}
	}
	return nil
}

// CheckRecord compares one record. A keys-only Model record has a nil
// Value, so the server's must be empty.
func CheckRecord(got *cairnpb.Record, want Record) error {
	k := keys.Key{Major: got.GetKey().GetMajor(), Minor: got.GetKey().GetMinor()}
	switch {
	case !k.Equal(want.Key):
		return fmt.Errorf("key %s, want %s", k, want.Key)
	case !bytes.Equal(got.GetValue(), want.Value):
		return fmt.Errorf("%s: value %q, want %q", k, got.GetValue(), want.Value)
	case !bytes.Equal(got.GetVersion(), want.Version):
		return fmt.Errorf("%s: version %x, want %x", k, got.GetVersion(), want.Version)
	case !want.Expiry.Contains(got.GetExpirationMs()):
		return fmt.Errorf("%s: expiration_ms %d, want within %v", k, got.GetExpirationMs(), want.Expiry)
	}
	return nil
}

// CheckRecords compares records in order.
func CheckRecords(got []*cairnpb.Record, want []Record) error {
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			return fmt.Errorf("%d records, want %d: missing from %d on: %s", len(got), len(want), i, want[i].Key)
		case i >= len(want):
			return fmt.Errorf("%d records, want %d: extra from %d on: %s", len(got), len(want), i, FormatKeyPB(got[i].GetKey()))
		}
		if err := CheckRecord(got[i], want[i]); err != nil {
			return fmt.Errorf("record %d: %w\n got keys:  %s\n want keys: %s", i, err, KeysPB(got), Keys(want))
		}
	}
	return nil
}

// CheckRecordSet compares records as a set: got may come in any order but
// must hold no key twice. want must be in key order (as StoreScan returns).
func CheckRecordSet(got []*cairnpb.Record, want []Record) error {
	sorted := slices.Clone(got)
	slices.SortFunc(sorted, func(a, b *cairnpb.Record) int { return CompareKeys(keyPB(a.GetKey()), keyPB(b.GetKey())) })
	for i := 1; i < len(sorted); i++ {
		if CompareKeys(keyPB(sorted[i-1].GetKey()), keyPB(sorted[i].GetKey())) == 0 {
			return fmt.Errorf("key %s returned twice", FormatKeyPB(sorted[i].GetKey()))
		}
	}
	return CheckRecords(sorted, want)
}

// FormatResult prints a model Result on one line.
func FormatResult(r Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{success:%v", r.Success)
	if r.Put && r.Success {
		b.WriteString(" new_version:<any>")
	}
	if r.PreviousExists {
		pv := hex.EncodeToString(r.PreviousVersion)
		if r.AnyPreviousVersion {
			pv = "<any>"
		}
		fmt.Fprintf(&b, " previous_exists:true previous_value:%q previous_version:%s previous_expiration:%v",
			r.PreviousValue, pv, r.PreviousExpiry)
	}
	b.WriteString("}")
	return b.String()
}

// FormatPB prints a server OperationResult on one line.
func FormatPB(r *cairnpb.OperationResult) string {
	if r == nil {
		return "<nil>"
	}
	return fmt.Sprintf("{success:%v new_version:%x previous_exists:%v previous_value:%q previous_version:%x previous_expiration_ms:%d}",
		r.GetSuccess(), r.GetNewVersion(), r.GetPreviousExists(), r.GetPreviousValue(), r.GetPreviousVersion(), r.GetPreviousExpirationMs())
}

// FormatKeyPB prints a wire key in the string form.
func FormatKeyPB(k *cairnpb.Key) string { return keyPB(k).String() }

// Keys prints the records' keys.
func Keys(rs []Record) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = r.Key.String()
	}
	return "[" + strings.Join(s, " ") + "]"
}

// KeysPB prints the wire records' keys.
func KeysPB(rs []*cairnpb.Record) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = FormatKeyPB(r.GetKey())
	}
	return "[" + strings.Join(s, " ") + "]"
}

func keyPB(k *cairnpb.Key) keys.Key { return keys.Key{Major: k.GetMajor(), Minor: k.GetMinor()} }
