package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Pebble's MANIFEST and WAL files are record logs (LevelDB's log format):
// 32 KiB blocks, each a sequence of chunks; a record is one full chunk or a
// first chunk, middle chunks and a last chunk. A block's tail too short for
// a header is zero-filled.
//
//	legacy (MANIFEST):   | crc (4) | length (2) | type 1-4  | payload ... |
//	recyclable (WAL):    | crc (4) | length (2) | type 5-8  | log (4) | payload ... |
//	WAL sync chunks:     | crc (4) | length (2) | type 9-12 | log (4) | synced offset (8) | payload ... |
//
// crc is the masked CRC-32C of everything after the length: type, log
// number (and synced offset) and payload. The log number lets a recycled
// file's old chunks be told from new ones; a zero-length chunk of log+1 is
// an explicit end of log.
//
// scanLog reads such a log and says how it ends. A log may end cleanly, or
// in a torn tail (a crash cut the last write short, or a recycled file's old
// contents follow). It must never have a bad chunk followed later by a good
// chunk that starts a record of the same log: then bytes in the middle were
// damaged, which is corruption, not a crash.
const (
	logBlockSize  = 32 << 10
	legacyHeader  = 7
	recycleHeader = 11
	syncHeader    = 19
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func maskedCRC(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return (c>>15 | c<<17) + 0xa282ead8
}

// chunk positions
const (
	posFull = iota + 1
	posFirst
	posMiddle
	posLast
)

// logEnd is what scanLog found.
type logEnd struct {
	Records   int   // whole records before the end
	LastStart int64 // offset of the last whole record's first chunk
	End       int64 // offset just past the last whole record
	// Stop is the offset of the chunk where reading stopped without a clean
	// end (-1: the log ended cleanly), and Why says what was wrong there.
	Stop int64
	Why  string
	// Resume is the offset of the first chunk after Stop that starts a
	// record of this log with a valid checksum (-1: none); ResumeRecords
	// counts the records found from there on, up to the next bad chunk.
	Resume        int64
	ResumeRecords int
}

// damaged reports whether good records follow a bad chunk.
func (l logEnd) damaged() bool { return l.Resume >= 0 }

// chunk is one parsed chunk header.
type chunk struct {
	pos    int
	header int
	length int
	log    uint32
	hasLog bool
}

// parseChunk reads the chunk at b[0:], which holds the rest of a block, for
// a log numbered logNum (0 for the MANIFEST). ok is false with why set when
// the chunk is not a valid chunk of this log; end is set for an explicit
// end-of-log trailer.
func parseChunk(b []byte, logNum uint32) (c chunk, end bool, why string) {
	if len(b) < legacyHeader {
		return c, false, "truncated chunk header"
	}
	sum := binary.LittleEndian.Uint32(b[0:4])
	c.length = int(binary.LittleEndian.Uint16(b[4:6]))
	t := b[6]
	switch {
	case t == 0 && sum == 0 && c.length == 0:
		return c, false, "zeroed chunk"
	case t >= 1 && t <= 4:
		c.pos, c.header = int(t), legacyHeader
	case t >= 5 && t <= 8:
		c.pos, c.header, c.hasLog = int(t-4), recycleHeader, true
	case t >= 9 && t <= 12:
		c.pos, c.header, c.hasLog = int(t-8), syncHeader, true
	default:
		return c, false, fmt.Sprintf("bad chunk type %d", t)
	}
	if len(b) < c.header {
		return c, false, "truncated chunk header"
	}
	if c.hasLog {
		c.log = binary.LittleEndian.Uint32(b[7:11])
		if c.log == logNum+1 && c.length == 0 && c.pos == posFull {
			return c, true, ""
		}
		if c.log != logNum {
			return c, false, fmt.Sprintf("chunk of log %d, not %d (an older log's data)", c.log, logNum)
		}
	}
	if c.header+c.length > len(b) {
		return c, false, "chunk runs past the end of its block"
	}
	if maskedCRC(b[6:c.header+c.length]) != sum {
		return c, false, "checksum mismatch"
	}
	return c, false, ""
}

// scanLog reads the record log in f (size bytes) numbered logNum.
func scanLog(f io.ReaderAt, size int64, logNum uint32) (logEnd, error) {
	res := logEnd{Stop: -1, Resume: -1}
	buf := make([]byte, logBlockSize)
	inRecord := false
	var start int64
	for block := int64(0); block < size; block += logBlockSize {
		n, err := f.ReadAt(buf, block)
		if err != nil && !errors.Is(err, io.EOF) {
			return res, err
		}
		b := buf[:n]
		for off := 0; ; {
			rest := b[off:]
			if len(rest) == 0 || len(rest) < recycleHeader && allZero(rest) {
				break // the block's end, or its zero-filled tail
			}
			c, end, why := parseChunk(b[off:], logNum)
			at := block + int64(off)
			switch {
			case end && !inRecord:
				return res, nil
			case why != "":
				return stopAt(f, size, logNum, res, at, why, buf)
			}
			switch {
			case c.pos == posFull && !inRecord, c.pos == posFirst && !inRecord:
				inRecord, start = c.pos == posFirst, at
			case (c.pos == posMiddle || c.pos == posLast) && inRecord:
				inRecord = c.pos == posMiddle
			default:
				return stopAt(f, size, logNum, res, at, "chunk out of order", buf)
			}
			off += c.header + c.length
			if !inRecord {
				res.Records++
				res.LastStart, res.End = start, block+int64(off)
			}
		}
	}
	if inRecord {
		res.Stop, res.Why = res.End, "log ends inside a record"
	}
	return res, nil
}

// stopAt records a stop at offset at and looks for damage: a valid chunk
// of this log that starts a record anywhere after it. A chunk header that
// was itself damaged hides where the next chunk begins, so every offset
// after the stop is tried (a chunk must have a valid type, fit its block,
// carry this log's number and match its CRC, so a false match is about as
// likely as a CRC collision).
func stopAt(f io.ReaderAt, size int64, logNum uint32, res logEnd, at int64, why string, buf []byte) (logEnd, error) {
	res.Stop, res.Why = at, why
	from := int(at%logBlockSize) + 1
	for block := at / logBlockSize * logBlockSize; block < size; block += logBlockSize {
		n, err := f.ReadAt(buf, block)
		if err != nil && !errors.Is(err, io.EOF) {
			return res, err
		}
		for off := from; n-off >= legacyHeader; {
			c, end, why := parseChunk(buf[off:n], logNum)
			if end || why != "" {
				off++
				continue
			}
			if c.pos == posFull || c.pos == posFirst {
				if res.Resume < 0 {
					res.Resume = block + int64(off)
				}
				res.ResumeRecords++
			}
			off += c.header + c.length
		}
		from = 0
	}
	return res, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
