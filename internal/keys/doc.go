// Package keys defines Cairn's record key: a major path of one or more string
// components and a minor path of zero or more. It parses and prints the
// string form, checks size limits, hashes the major path to a partition, and
// encodes keys into the order-preserving byte form that the storage layer
// uses as a Pebble key.
//
// # String form
//
//	/major1/major2/-/minor1/minor2
//
// Components are separated by '/'. A component that is exactly "-" separates
// the major path from the minor path. Inside a component '%' and '/' are
// written %25 and %2F, and a component that is exactly "-" is written %2D.
// Bytes below 0x20 and 0x7F are written %XX too, so a printed key is one line
// of plain text, and so is every byte that is not part of valid UTF-8, so
// even an invalid key (which Parse refuses) prints as valid UTF-8. Parse
// accepts %XX for any byte. Print then Parse returns an equal key, and Parse
// then Print returns the input when it is canonical.
//
// # Validity
//
// Every component is non-empty: Parse refuses "/a//b" and a trailing '/',
// and Limits.CheckKey and CheckParent refuse an empty component given as a
// list, so the string form never hides one. "/" is therefore never a record:
// it is the root, which ParsePrefix (scan and count) reads as the whole
// store. Every component is valid UTF-8 (Key.CheckUTF8, part of Limits.CheckKey),
// and so are a Range's start, end and prefix (Range.Validate). The server
// checks both before a key is used, so every stored key is valid UTF-8.
//
// # Storage key
//
// Records live in the record key space, grouped by the shard that owns them
// (each shard's records are its own, even where two shards have replicas on
// one node, so a partition can be copied into one shard while another still
// serves it), and within a shard sorted by the 64-bit hash of the major
// path, so each partition (a contiguous range of hash space) is one
// contiguous range of Pebble keys. Lite's one shard is shard 0.
//
//	+------+--------------+------------------+--------------------+------+--------------------+
//	| 0x72 | shard (8 BE) | hash (8 bytes BE)| major components   | 0x00 | minor components   |
//	| 'r'  |              | xxhash64(major)  | each: esc(c) 00 01 | 0x02 | each: esc(c) 00 01 |
//	+------+--------------+------------------+--------------------+------+--------------------+
//	 <--------- HeaderLen (17) ------------->
//
// esc(c) writes the component's bytes with every 0x00 replaced by 00 FF. The
// terminator 00 01 therefore sorts below any continuation of the component,
// so comparing encoded paths bytewise compares them component by component,
// a parent before its children. The marker 00 02 cannot start a component
// (a component starts with 00 only as 00 FF or, empty, as 00 01), so the
// bytes up to and including it are a prefix shared by exactly the records of
// one major path.
//
// # Partitions
//
// A store has N partitions. Partition p owns hashes h with
// floor(h*N / 2^64) == p, that is [ceil(p*2^64/N), ceil((p+1)*2^64/N)).
// Splitting every partition in f (N -> N*f) adds boundaries inside the
// ranges: partition p of N is exactly partitions p*f .. p*f+f-1 of N*f, so
// PartitionOf(h, N*f)/f == PartitionOf(h, N) and no key changes hands.
//
// # Concurrency
//
// Everything here is a pure function or an immutable value; all of it is safe
// for concurrent use.
package keys
