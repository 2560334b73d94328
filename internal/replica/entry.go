package replica

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/commandpb"
	"google.golang.org/protobuf/proto"
)

// A Raft entry's data is a command with a header:
//
//	0      1                 2               10              18
//	+------+-----------------+---------------+---------------+-----------
//	| 0x01 | master | replica| proposer (8)  | proposal (8)  | command (protobuf)
//	+------+-----------------+---------------+---------------+-----------
//	 format  sync modes, 4 bits each
//
// The sync modes tell the leader (master) and each follower (replica) how
// to persist the entry. The proposer node and its proposal id let the leader
// match an applied entry to the waiting request.
const (
	entryFormat    = 0x01
	entryHeaderLen = 18
)

var errBadEntry = errors.New("replica: malformed log entry")

type entryHeader struct {
	master, replica storage.SyncMode
	proposer        uint64
	proposal        uint64
}

func encodeEntry(h entryHeader, cmd *commandpb.Command) ([]byte, error) {
	b := make([]byte, entryHeaderLen, entryHeaderLen+proto.Size(cmd)) // one buffer, sized once
	b[0] = entryFormat
	b[1] = byte(h.master)<<4 | byte(h.replica)&0x0F
	binary.BigEndian.PutUint64(b[2:10], h.proposer)
	binary.BigEndian.PutUint64(b[10:18], h.proposal)
	return proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(b, cmd)
}

func decodeHeader(b []byte) (entryHeader, error) {
	if len(b) < entryHeaderLen || b[0] != entryFormat {
		return entryHeader{}, fmt.Errorf("%w: %d bytes", errBadEntry, len(b))
	}
	return entryHeader{
		master: storage.SyncMode(b[1] >> 4), replica: storage.SyncMode(b[1] & 0x0F),
		proposer: binary.BigEndian.Uint64(b[2:10]), proposal: binary.BigEndian.Uint64(b[10:18]),
	}, nil
}

func decodeEntry(b []byte) (entryHeader, *commandpb.Command, error) {
	h, err := decodeHeader(b)
	if err != nil {
		return h, nil, err
	}
	var cmd commandpb.Command
	if err := proto.Unmarshal(b[entryHeaderLen:], &cmd); err != nil {
		return h, nil, fmt.Errorf("%w: %v", errBadEntry, err)
	}
	return h, &cmd, nil
}
