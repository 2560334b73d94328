package files

import "github.com/cockroachdb/pebble/v2/vfs"

// MemFS is an FS in memory (Pebble's vfs.MemFS), for tests outside
// internal/storage, which may not import Pebble. A crashable one's
// CrashClone is the file system as a power loss at that moment could
// leave it.
type MemFS = vfs.MemFS

// CrashCloneCfg says how much unsynced data a CrashClone keeps; the zero
// value keeps exactly what was synced.
type CrashCloneCfg = vfs.CrashCloneCfg

// NewMem returns an empty MemFS.
func NewMem() *MemFS { return vfs.NewMem() }

// NewCrashableMem returns an empty MemFS that supports CrashClone.
func NewCrashableMem() *MemFS { return vfs.NewCrashableMem() }
