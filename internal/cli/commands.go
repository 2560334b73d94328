package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cairndb/cairn/client"
)

// KV runs kv commands against one client, writing results to Out.
type KV struct {
	Client *client.Client
	In     io.Reader // read by put --file -
	Out    io.Writer // results
	JSON   bool      // print JSON instead of text
	// Terminal is set when Out is a terminal: get then ends the value with
	// a newline.
	Terminal bool
	// Progress gets export's and import's progress lines (stderr); nil:
	// none.
	Progress io.Writer
}

// PutArgs are put's arguments.
type PutArgs struct {
	Key       string
	Value     string // the VALUE argument, when HasValue
	HasValue  bool
	File      string // --file; "-" is stdin; "" when not given
	TTL       time.Duration
	IfAbsent  bool
	IfPresent bool
	IfVersion string // hex, when HasIfVersion
	// HasIfVersion records that --if-version was given, so that an empty
	// value (a script's unset variable) is refused, not taken as no condition.
	HasIfVersion bool
}

// ifVersion reports whether the put is conditional on a version: the flag
// was given, or a caller set IfVersion without HasIfVersion.
func (a PutArgs) ifVersion() bool { return a.HasIfVersion || a.IfVersion != "" }

// value returns the bytes to write, from the argument or the file.
func (a PutArgs) value(in io.Reader) ([]byte, error) {
	switch {
	case a.HasValue && a.File != "":
		return nil, Usagef("put: give the value as an argument or with --file, not both")
	case a.HasValue:
		return []byte(a.Value), nil
	case a.File == "-":
		return io.ReadAll(in)
	case a.File != "":
		b, err := os.ReadFile(a.File)
		if err != nil {
			return nil, Usagef("--file: %v", err)
		}
		return b, nil
	}
	return nil, Usagef("put: missing VALUE (or --file F, --file - for stdin)")
}

// Put writes a record and prints its new version. A conditional put that is
// not done returns ErrNotDone.
func (kv *KV) Put(ctx context.Context, a PutArgs) error {
	conds := 0
	for _, set := range []bool{a.IfAbsent, a.IfPresent, a.ifVersion()} {
		if set {
			conds++
		}
	}
	if conds > 1 {
		return Usagef("put: --if-absent, --if-present and --if-version exclude each other")
	}
	if a.TTL < 0 {
		return Usagef("--ttl: %v is negative", a.TTL)
	}
	k, err := client.ParseKey(a.Key)
	if err != nil {
		return err
	}
	var match client.Version
	if a.ifVersion() {
		if match, err = ParseVersion("--if-version", a.IfVersion); err != nil {
			return err
		}
	}
	v, err := a.value(kv.In)
	if err != nil {
		return err
	}
	opts := []client.Option{client.WithTTL(a.TTL)}
	var res client.Result
	switch {
	case a.IfAbsent:
		res, err = kv.Client.PutIfAbsent(ctx, k, v, opts...)
	case a.IfPresent:
		res, err = kv.Client.PutIfPresent(ctx, k, v, opts...)
	case match != nil:
		res, err = kv.Client.PutIfVersion(ctx, k, v, match, opts...)
	default:
		res.Version, err = kv.Client.Put(ctx, k, v, opts...)
		res.Done = err == nil
	}
	if err != nil {
		return err
	}
	if kv.JSON {
		if err := writeJSON(kv.Out, putJSON{Key: k.String(), Version: res.Version.String(), Done: res.Done}); err != nil {
			return err
		}
	}
	if !res.Done {
		return ErrNotDone
	}
	if kv.JSON {
		return nil
	}
	_, err = fmt.Fprintln(kv.Out, res.Version)
	return err
}

// Get prints a record's value, or its JSON form. A missing key returns
// ErrNotFound.
func (kv *KV) Get(ctx context.Context, key string) error {
	k, err := client.ParseKey(key)
	if err != nil {
		return err
	}
	rec, found, err := kv.Client.Get(ctx, k)
	if err != nil {
		return err
	}
	if kv.JSON {
		doc := getJSON{RecordJSON: RecordJSON{Key: k.String()}, Found: found}
		if found {
			doc.RecordJSON = ToJSON(rec, false)
		}
		if err := writeJSON(kv.Out, doc); err != nil {
			return err
		}
	}
	if !found {
		return ErrNotFound
	}
	if kv.JSON {
		return nil
	}
	if _, err := kv.Out.Write(rec.Value); err != nil {
		return err
	}
	if kv.Terminal && (len(rec.Value) == 0 || rec.Value[len(rec.Value)-1] != '\n') {
		_, err = io.WriteString(kv.Out, "\n")
	}
	return err
}

// Delete deletes a record, if ifVersion is not nil only at that version
// (hex; an empty one is refused). It returns ErrNotFound if there was no
// record and ErrNotDone if there was one at another version.
func (kv *KV) Delete(ctx context.Context, key string, ifVersion *string) error {
	k, err := client.ParseKey(key)
	if err != nil {
		return err
	}
	var res client.Result
	if ifVersion != nil {
		match, err := ParseVersion("--if-version", *ifVersion)
		if err != nil {
			return err
		}
		if res, err = kv.Client.DeleteIfVersion(ctx, k, match, client.WithReturn(client.ReturnVersion)); err != nil {
			return err
		}
	} else if res, err = kv.Client.Delete(ctx, k); err != nil {
		return err
	}
	if kv.JSON {
		if err := writeJSON(kv.Out, deleteJSON{Key: k.String(), Deleted: res.Done}); err != nil {
			return err
		}
	}
	switch {
	case !res.Done && res.Previous != nil:
		return ErrNotDone // a record at another version
	case !res.Done:
		return ErrNotFound
	}
	return nil
}

// getJSON is get's JSON document: the record, or just the key, and
// whether it was found. It is printed for a missing key too.
type getJSON struct {
	RecordJSON
	Found bool `json:"found"`
}

// putJSON is put's JSON document, printed whether or not a conditional
// put was done; Version is empty when it was not.
type putJSON struct {
	Key     string `json:"key"`
	Version string `json:"version,omitempty"`
	Done    bool   `json:"done"`
}

// deleteJSON is delete's JSON document, printed whether or not a record
// was deleted.
type deleteJSON struct {
	Key     string `json:"key"`
	Deleted bool   `json:"deleted"`
}

// Selection is what multi-get, scan and count select under their parent.
type Selection struct {
	Depth    string // --depth; "" is the default
	Range    RangeFlags
	KeysOnly bool // --keys-only
	Batch    int  // --batch: records per request
}

func (s Selection) parse() (*client.KeyRange, client.Depth, error) {
	r, err := s.Range.Range()
	if err != nil {
		return nil, 0, err
	}
	d, err := ParseDepth(s.Depth)
	if err != nil {
		return nil, 0, err
	}
	if s.Batch < 0 {
		return nil, 0, Usagef("--batch: %d is negative", s.Batch)
	}
	return r, d, nil
}

// under parses a multi-get's or multi-delete's parent (a complete major
// path, with an optional minor path) and s.
func (s Selection) under(parent string) (client.Key, *client.KeyRange, client.Depth, error) {
	p, err := client.ParseKey(parent)
	if err != nil {
		return client.Key{}, nil, 0, err
	}
	r, d, err := s.parse()
	return p, r, d, err
}

// MultiGet prints the records under parent (a complete major path, with an
// optional minor path) in key order, or in reverse.
func (kv *KV) MultiGet(ctx context.Context, parent string, s Selection, reverse bool) error {
	p, r, d, err := s.under(parent)
	if err != nil {
		return err
	}
	dir := client.Forward
	if reverse {
		dir = client.Reverse
	}
	return kv.print(kv.Client.MultiGetIterator(ctx, dir, s.Batch, p, r, d), s.KeysOnly)
}

// MultiDelete deletes the records under parent (a complete major path,
// with an optional minor path) chosen by s's range and depth, atomically,
// and prints how many were deleted.
func (kv *KV) MultiDelete(ctx context.Context, parent string, s Selection) error {
	p, r, d, err := s.under(parent)
	if err != nil {
		return err
	}
	n, err := kv.Client.MultiDelete(ctx, p, r, d)
	if err != nil {
		return err
	}
	if kv.JSON {
		return writeJSON(kv.Out, multiDeleteJSON{Parent: p.String(), Deleted: n})
	}
	_, err = fmt.Fprintln(kv.Out, n)
	return err
}

// multiDeleteJSON is multi-delete's JSON document.
type multiDeleteJSON struct {
	Parent  string `json:"parent"`
	Deleted int    `json:"deleted"`
}

// Scan prints the records of the store, or of the major paths under parent.
func (kv *KV) Scan(ctx context.Context, parent string, s Selection) error {
	p, err := ParseParent(parent)
	if err != nil {
		return err
	}
	r, d, err := s.parse()
	if err != nil {
		return err
	}
	if s.KeysOnly {
		return kv.print(recordsOf(kv.Client.StoreKeysIterator(ctx, s.Batch, p, r, d)), true)
	}
	return kv.print(kv.Client.StoreIterator(ctx, s.Batch, p, r, d), false)
}

// Count prints how many records Scan would print.
func (kv *KV) Count(ctx context.Context, parent string, s Selection) error {
	p, err := ParseParent(parent)
	if err != nil {
		return err
	}
	r, d, err := s.parse()
	if err != nil {
		return err
	}
	n := 0
	for _, err := range kv.Client.StoreKeysIterator(ctx, s.Batch, p, r, d) {
		if err != nil {
			return err
		}
		n++
	}
	if kv.JSON {
		return writeJSON(kv.Out, struct {
			Count int `json:"count"`
		}{n})
	}
	_, err = fmt.Fprintln(kv.Out, n)
	return err
}

// print writes records as text lines or as a streamed JSON array. On an
// iteration error the JSON array is still closed, so what was printed
// parses.
func (kv *KV) print(seq func(func(client.Record, error) bool), keysOnly bool) error {
	var arr *jsonArray
	if kv.JSON {
		arr = &jsonArray{w: kv.Out}
	}
	var iterErr error
	for rec, err := range seq {
		if err != nil {
			iterErr = err
			break
		}
		if arr != nil {
			arr.add(ToJSON(rec, keysOnly))
			if arr.err != nil {
				return arr.err
			}
			continue
		}
		if _, err := fmt.Fprintln(kv.Out, TextLine(rec, keysOnly)); err != nil {
			return err
		}
	}
	if arr != nil {
		if err := arr.close(); err != nil && iterErr == nil {
			return err
		}
	}
	return iterErr
}

// recordsOf adapts a key sequence to a record sequence.
func recordsOf(seq func(func(client.Key, error) bool)) func(func(client.Record, error) bool) {
	return func(yield func(client.Record, error) bool) {
		for k, err := range seq {
			if !yield(client.Record{Key: k}, err) {
				return
			}
		}
	}
}
