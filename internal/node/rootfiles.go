package node

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
)

// A node's own files (config.json, membership.json, node.json,
// topology.json, snapshot metadata) are checked files (package
// storage/files): a CRC-32C envelope, written atomically through the
// node's FS. A corrupt one is refused, naming it; the node never guesses
// at its content.

// readChecked reads the checked file at path into v. A corrupt file's
// error (files.ErrCorrupt) says what the operator can do.
func readChecked(fs files.FS, path string, v any) error {
	err := files.ReadJSON(fs, path, v)
	if errors.Is(err, files.ErrCorrupt) {
		return fmt.Errorf("%w; restore it from a backup or re-deploy the node", err)
	}
	return err
}

// loadTopology reads and validates the topology file at path.
func loadTopology(fs files.FS, path string) (*topology.Topology, error) {
	var raw json.RawMessage
	if err := readChecked(fs, path, &raw); err != nil {
		return nil, err
	}
	t, err := topology.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}
