// Package fieldrec is the field record: a value format that Cairn's server
// understands, so that a write can replace some fields of a record without
// reading it first (PutOp.merge_fields, the Go client's UpdateFields and
// MergeFields). It is how `cairn bench` and the YCSB binding store a record
// in the value layout, and it is part of the wire contract: every client
// that writes field records writes these bytes.
//
//	+------+-----------------+-------------------------------------------------+
//	| 0x01 | uvarint nfields | nfields times:                                  |
//	|      |                 | uvarint len(name) | name | uvarint len(v) | v    |
//	+------+-----------------+-------------------------------------------------+
//
// 0x01 is the format version. Fields keep the order they were written in.
// Every uvarint is minimally encoded, so a record has exactly one encoding.
// A well-formed record has no two fields of one name (Check); Decode
// accepts one that has, for records written before that rule.
//
// Merge is how the server applies merge_fields: each field of the update
// replaces the stored field of its name, in place, and fields the stored
// record lacks are appended in the update's order. It is a pure function of
// its inputs, so every replica that applies a merge writes the same bytes.
//
// The package has no state; everything is safe for concurrent use.
package fieldrec
