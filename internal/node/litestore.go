package node

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/files"
)

// A lite root remembers, outside its engine, which store it holds, so a
// lost data directory is noticed instead of replaced by an empty store:
//
//	ROOT/store.json   (a checked file, package files)
//	data: {
//	  "store": "kvstore",                  the store's name
//	  "partitions": 10,                    its partition count
//	  "created": "2026-11-25T14:00:00Z"    when it was created (UTC), or when
//	                                       this file was first written for a
//	                                       root made before it existed
//	}
//
// It is written once the engine holds the store. An engine that holds no
// store while store.json names one lost its data: lite refuses to start.
const storeFile = "store.json"

type storeMarker struct {
	Store      string    `json:"store"`
	Partitions uint32    `json:"partitions"`
	Created    time.Time `json:"created"`
}

// checkLiteStore compares ROOT/store.json with what the engine holds. It
// reports whether the file is there.
func checkLiteStore(fs files.FS, root string, e *storage.Engine) (bool, error) {
	path := filepath.Join(root, storeFile)
	var m storeMarker
	err := files.ReadJSON(fs, path, &m)
	switch {
	case files.IsNotExist(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("%w; it records which store %s holds: restore it from a copy, or remove it if %s/data is the store you mean to run", err, root, root)
	}
	meta, ok, err := e.StoreMeta()
	switch {
	case err != nil:
		return true, err
	case !ok:
		return true, fmt.Errorf("%s is empty but %s says store %q (%d partitions, created %s) was here: the data was lost; restore %s from a copy, or remove %s to start an empty store",
			filepath.Join(root, "data"), path, m.Store, m.Partitions, m.Created.Format(time.RFC3339), filepath.Join(root, "data"), path)
	case meta.Name != m.Store || meta.Partitions != m.Partitions:
		return true, fmt.Errorf("%s says store %q with %d partitions was here, but %s holds store %q with %d partitions: was the data directory replaced? Put the right one back, or remove %s",
			path, m.Store, m.Partitions, filepath.Join(root, "data"), meta.Name, meta.Partitions, path)
	}
	return true, nil
}

// writeLiteStore writes ROOT/store.json for the store the engine holds.
func writeLiteStore(fs files.FS, root string, meta storage.StoreMeta) error {
	m := storeMarker{Store: meta.Name, Partitions: meta.Partitions, Created: time.Now().UTC().Truncate(time.Second)}
	if err := files.WriteJSON(fs, filepath.Join(root, storeFile), m); err != nil {
		return fmt.Errorf("recording the store in %s: %w", filepath.Join(root, storeFile), err)
	}
	return nil
}

// liteOpenError explains an engine that lite cannot open: corruption says
// what is wrong and what to do.
func liteOpenError(root string, err error) error {
	if !errors.Is(err, storage.ErrCorrupt) && !errors.Is(err, files.ErrCorrupt) {
		return err
	}
	return fmt.Errorf("the store in %s cannot be proven whole: %w%s. Restore %s from a copy taken while the store was stopped (or from a snapshot), or move %s and %s aside to start an empty store",
		root, err, unchanged(err), root, filepath.Join(root, "data"), filepath.Join(root, storeFile))
}
