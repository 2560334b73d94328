package node

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/storage/files"
)

// A store that cannot be proven whole is never deleted: its directory is
// renamed beside itself, for the operator to inspect and remove,
//
//	DATA.corrupt-20261125T140211Z    (UTC; -2, -3, ... if taken)
//
// and the node starts a fresh engine in DATA.
const asideInfix = ".corrupt-"

// asideTime is the UTC time in an aside directory's name.
const asideTime = "20060102T150405Z"

// moveAside renames dir to its aside name and syncs the parent directory.
func moveAside(fs files.FS, dir string, now time.Time) (string, error) {
	base := dir + asideInfix + now.UTC().Format(asideTime)
	to := base
	for i := 2; ; i++ {
		if _, err := fs.Stat(to); files.IsNotExist(err) {
			break
		} else if err != nil {
			return "", fmt.Errorf("setting %s aside: %w", dir, err)
		}
		to = fmt.Sprintf("%s-%d", base, i)
	}
	if err := fs.Rename(dir, to); err != nil {
		return "", fmt.Errorf("setting %s aside as %s: %w", dir, to, err)
	}
	d, err := fs.OpenDir(filepath.Dir(dir))
	if err != nil {
		return to, fmt.Errorf("syncing %s: %w", filepath.Dir(dir), err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return to, fmt.Errorf("syncing %s: %w", filepath.Dir(dir), err)
	}
	return to, nil
}

// asideDirs lists the aside directories of the engines in dirs (the data
// directory and ROOT/admin) with their sizes, by path.
func asideDirs(fs files.FS, dirs ...string) []*controlpb.AsideDir {
	var out []*controlpb.AsideDir
	for _, dir := range dirs {
		names, err := fs.List(filepath.Dir(dir))
		if err != nil {
			continue
		}
		prefix := filepath.Base(dir) + asideInfix
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				p := filepath.Join(filepath.Dir(dir), n)
				out = append(out, &controlpb.AsideDir{Path: p, Bytes: dirBytes(fs, p)})
			}
		}
	}
	slices.SortFunc(out, func(a, b *controlpb.AsideDir) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// dirBytes is the size of the files under dir.
func dirBytes(fs files.FS, dir string) int64 {
	names, err := fs.List(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, name := range names {
		p := filepath.Join(dir, name)
		fi, err := fs.Stat(p)
		switch {
		case err != nil:
		case fi.IsDir():
			n += dirBytes(fs, p)
		default:
			n += fi.Size()
		}
	}
	return n
}
