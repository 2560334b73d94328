package bench

import "github.com/cairndb/cairn/api/fieldrec"

// The value layout stores a record, all its fields, as one value under the
// key /<table>/<key>, in the field record format (api/fieldrec, drawn
// there). With YCSB's defaults (10 fields "field0".."field9" of 100 bytes) a
// record is 1 + 1 + 10*(1+6+1+100) = 1082 bytes. The server understands the
// format, so an update can send only the fields it changes
// (cairn.update=merge).

// errBadRecord is returned (wrapped) when a stored value is not a record in
// the value layout (written by something else, or corrupted).
var errBadRecord = fieldrec.ErrMalformed

// appendRecord encodes fields in the value layout.
func appendRecord(dst []byte, fields []Field) []byte { return fieldrec.Append(dst, fields) }

// decodeRecord appends the fields of an encoded record to out. Values alias
// b. Names equal to one of names are returned as that string, so decoding a
// record of known fields does not allocate.
func decodeRecord(b []byte, names []string, out []Field) ([]Field, error) {
	return fieldrec.Decode(b, names, out)
}

// intern returns the element of names equal to b, or string(b).
func intern(b []byte, names []string) string {
	for _, n := range names {
		if n == string(b) {
			return n
		}
	}
	return string(b)
}
