// Package files is a stand-in until the files branch lands: Cairn's own
// small files, checksummed, through a vfs.FS.
package files

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/cockroachdb/errors/oserror"
	"github.com/cockroachdb/pebble/v2/vfs"
)

type FS = vfs.FS

var Default FS = vfs.Default

var ErrCorrupt = errors.New("files: corrupt file")

func IsNotExist(err error) bool { return oserror.IsNotExist(err) || errors.Is(err, os.ErrNotExist) }

func ReadFile(fs FS, path string) ([]byte, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func WriteAtomic(fs FS, path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		fs.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		fs.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		fs.Remove(tmp)
		return err
	}
	if err := fs.Rename(tmp, path); err != nil {
		fs.Remove(tmp)
		return err
	}
	d, err := fs.OpenDir(fs.PathDir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

type envelope struct {
	CRC  string          `json:"crc32c"`
	Data json.RawMessage `json:"data"`
}

var table = crc32.MakeTable(crc32.Castagnoli)

func WriteJSON(fs FS, path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(envelope{CRC: fmt.Sprintf("%08x", crc32.Checksum(data, table)), Data: data})
	return WriteAtomic(fs, path, append(b, '\n'))
}

func ReadJSON(fs FS, path string, v any) error {
	b, err := ReadFile(fs, path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var e envelope
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&e); err != nil || e.CRC == "" || e.Data == nil {
		return fmt.Errorf("%w: %s: not a checked file", ErrCorrupt, path)
	}
	if got := fmt.Sprintf("%08x", crc32.Checksum(e.Data, table)); got != e.CRC {
		return fmt.Errorf("%w: %s: crc32c %s in the file, %s computed", ErrCorrupt, path, e.CRC, got)
	}
	if err := json.Unmarshal(e.Data, v); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	return nil
}
