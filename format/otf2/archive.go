package otf2

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/internal/regular"
)

// Archive is an opened OTF2 archive: its anchor file and global
// definitions. Event files are opened one location at a time.
type Archive struct {
	// Path is the anchor file.
	Path   string
	Anchor *Anchor
	Defs   *Defs
	// base is the archive's name without ".otf2": base+".def" holds the
	// global definitions and base+"/" the per-location files.
	base string
}

// AnchorPath returns the anchor file of path: path itself, or
// path/traces.otf2 when path is a directory (a Score-P experiment
// directory or the archive's own directory).
func AnchorPath(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("otf2: %w", err)
	}
	if !st.IsDir() {
		return path, nil
	}
	p := filepath.Join(path, "traces.otf2")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	m, _ := filepath.Glob(filepath.Join(path, "*.otf2"))
	if len(m) == 1 {
		return m[0], nil
	}
	return "", fmt.Errorf("otf2: %s is a directory without traces.otf2 (expected an OTF2 anchor file in it)", path)
}

// Open opens the archive whose anchor file (or directory) is path and
// reads its global definitions.
func Open(path string) (*Archive, error) {
	anchor, err := AnchorPath(path)
	if err != nil {
		return nil, err
	}
	a, err := ReadAnchor(anchor)
	if err != nil {
		return nil, err
	}
	ar := &Archive{Path: anchor, Anchor: a, base: strings.TrimSuffix(anchor, ".otf2")}
	defPath := ar.base + ".def"
	f, err := regular.Open(defPath)
	if err != nil {
		return nil, fmt.Errorf("otf2: global definitions: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("otf2: %w", err)
	}
	ar.Defs, err = ReadDefs(defPath, f, st.Size(), int64(a.DefChunkSize))
	if err != nil {
		return nil, err
	}
	if uint64(len(ar.Defs.Locations)) != a.Locations {
		return nil, format.OffsetError(anchor, 30, "the anchor file announces %d locations, but %s defines %d", a.Locations, defPath, len(ar.Defs.Locations))
	}
	return ar, nil
}

// Locations returns the location definitions in ascending id order, the
// order in which the importer numbers processes.
func (ar *Archive) Locations() []Location {
	ls := append([]Location(nil), ar.Defs.Locations...)
	sort.Slice(ls, func(i, j int) bool { return ls[i].ID < ls[j].ID })
	return ls
}

// LocationEvents is an open event file of one location.
type LocationEvents struct {
	*EventReader
	// Local holds the location's local definitions (empty when it has none).
	Local *LocalDefs
	f     *os.File
}

// Close closes the event file.
func (le *LocationEvents) Close() error {
	if le.f == nil {
		return nil
	}
	return le.f.Close()
}

// OpenEvents opens the event file of a location, with its local
// definitions applied. It returns nil and no error when the location has
// no event file and its definition says it has no events.
func (ar *Archive) OpenEvents(loc Location) (*LocationEvents, error) {
	dir := ar.base
	id := strconv.FormatUint(loc.ID, 10)
	local := &LocalDefs{Skipped: map[uint8]int{}}
	if lf, err := regular.Open(filepath.Join(dir, id+".def")); err == nil {
		st, err := lf.Stat()
		if err == nil {
			local, err = ReadLocalDefs(lf.Name(), lf, st.Size(), int64(ar.Anchor.DefChunkSize))
		}
		lf.Close()
		if err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("otf2: %w", err)
	}
	path := filepath.Join(dir, id+".evt")
	f, err := regular.Open(path)
	if errors.Is(err, fs.ErrNotExist) && loc.Events == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("otf2: location %d: %w", loc.ID, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("otf2: %w", err)
	}
	er, err := NewEventReader(path, f, st.Size(), int64(ar.Anchor.EventChunkSize), local)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &LocationEvents{EventReader: er, Local: local, f: f}, nil
}
