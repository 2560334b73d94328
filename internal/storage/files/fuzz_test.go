package files

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// FuzzReadJSON: ReadJSON never panics, and any bytes it accepts read back
// as the value the seed file was written for: a mutated checked file is
// refused (ErrCorrupt) or harmless, never silently another value.
func FuzzReadJSON(f *testing.F) {
	good, err := encodeChecked(want)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(bytes.ReplaceAll(good, []byte("\n"), []byte("\r\n")))
	f.Add(good[:len(good)/2])
	f.Add([]byte(`{"crc32c": "00000000", "data": {}}`))
	f.Add([]byte(`{"store": "kvstore", "sn": 2}`))
	f.Add([]byte(`{"data": {"store": "kvstore"}, "crc32c": "00000000", "data": {}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fs := writeRaw(t, "/m.json", b)
		var got sample
		err := ReadJSON(fs, "/m.json", &got)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%q: %v, want ErrCorrupt", b, err)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q read back as %+v, want %+v or ErrCorrupt", b, got, want)
		}
	})
}
