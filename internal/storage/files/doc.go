// Package files is Cairn's own small files, and the file system they go
// through.
//
// Every file Cairn keeps outside Pebble (node.json, config.json,
// membership.json, topology.json, snapshot metadata, the engine state file)
// is read and written here, through an FS: Pebble's vfs.FS, re-exported so
// that other packages need not import Pebble (only internal/storage may).
// The real binary uses Default (the operating system's files); tests use
// NewMem, NewCrashableMem (whose CrashClone is a power loss) or errorfs;
// and WithFaults injects errors into the real binary for fault tests
// (CAIRN_FAULTS, below).
//
// # Checked files
//
// WriteJSON writes a value as a checked file, an envelope holding the
// value's JSON and a CRC-32C of it:
//
//	{
//	  "crc32c": "1c2e6f0a",     CRC-32C (Castagnoli) of the bytes of "data" as
//	                            they stand in the file: from its first byte
//	                            ('{', '[', '"', ...) to its last, both
//	                            included; 8 lowercase hex digits
//	  "data": {                 the value, indented; an operator reads it
//	    "store": "kvstore",     with: jq .data FILE
//	    ...
//	  }
//	}
//
// The envelope has exactly these two members (written "crc32c" first), and
// the file ends with a newline. ReadJSON refuses, with an error wrapping ErrCorrupt
// that names the file and what is wrong: a file that is not one JSON
// object, a missing, doubled or unknown member (names are matched exactly,
// not case-insensitively as encoding/json would), a "crc32c" that is not 8
// lowercase hex digits, a checksum that does not match (both sums are
// given), or a "data" that does not decode into the value asked for. There
// is no unchecked legacy form: a flipped byte in a member's name can never
// turn a checked file into an unchecked one. Whitespace outside "data" is
// not covered by the checksum and may change freely.
//
// Errors of the FS itself (a missing file, EIO) are returned naming the
// path, never as ErrCorrupt; IsNotExist tells a missing file on any FS.
//
// # Atomic writes
//
// WriteAtomic replaces a file so that a crash at any moment leaves the old
// content or the new, never a mix or a torn file (WriteTemp and CommitTemp
// are its two halves, for data that is streamed or checked before it goes
// into place):
//
//  1. create PATH.<random>.tmp in the same directory
//  2. write the data, fsync, close
//  3. rename it over PATH
//  4. fsync the directory, so the rename itself is durable
//
// A failure in steps 1-3 removes the temporary file and leaves PATH as it
// was. A failure in step 4 leaves the new content in place, perhaps not yet
// durable, and is returned (a caller must not acknowledge what depended on
// it). A crash between steps leaves at most a stray PATH.*.tmp, which no
// reader opens.
//
// # Injected faults (testing only)
//
// WithFaults wraps an FS so that chosen operations fail, for tests of the
// real binary (cmd/cairn reads the spec from CAIRN_FAULTS):
//
//	spec  = rule { ";" rule }
//	rule  = "op=" OP "," "path=" GLOB [ ",after=" N ] [ ",errno=" ERRNO ]
//	OP    = write   Write, WriteAt, Preallocate
//	      | sync    Sync, SyncData, SyncTo (of files and directories)
//	      | create  Create, ReuseForWrite
//	      | rename  Rename (matches the old name or the new one)
//	      | remove  Remove, RemoveAll
//	      | read    Read, ReadAt
//	      | any     every operation errorfs sees (opens, stats, lists too)
//	GLOB  = a filepath.Match pattern matched against the base name
//	        (*.log, MANIFEST-*, *.sst, cairn-state.json); the temporary
//	        file of an atomic write, NAME.<16 hex digits>.tmp, matches as
//	        NAME too, so path=membership.json fails its writes and syncs
//	N     = 0 (default): the (N+1)th matching operation and every later
//	        one fail; each rule counts its own matches
//	ERRNO = EIO (default) | ENOSPC
//
// An injected error satisfies errors.Is(err, syscall.EIO) (or ENOSPC) and
// its text names the operation, the path and the rule, and says it was
// injected. Closes are never failed.
//
// # Concurrency
//
// Every function here may be called from any goroutine. Writers of one path
// do not share a temporary file; the last rename wins. A reader racing a
// writer sees the old file or the new one. The FS WithFaults returns is safe
// for concurrent use; its counters are shared by all users of that FS.
//
// # Example
//
//	var m membership
//	err := files.ReadJSON(fs, filepath.Join(root, "membership.json"), &m)
//	switch {
//	case files.IsNotExist(err): // not deployed yet
//	case errors.Is(err, files.ErrCorrupt): // refuse, naming the file
//	}
//	...
//	err = files.WriteJSON(fs, filepath.Join(root, "membership.json"), m)
package files
