// Package pipelines runs parscope's engine analyses as Apache Beam
// pipelines: the engine's own accumulators (engine.Prepared) are fed the
// parts of a .pst trace (engine.Restrict: runs, or processes of a run) on
// Beam workers, travel encoded (engine.Portable), are merged with their
// Merge and end with Result in the engine's envelope, so a pipeline writes
// exactly what `parscope ANALYSIS --json` prints, on a trace that does not
// fit one machine.
//
// The launcher opens the trace (only its manifest and index are read,
// and, for states derived from regions, its region entries) to prepare
// the request and plan the parts. Workers open the .pst themselves and
// read their part, so the reads are parallel and no record crosses the
// shuffle; what crosses it is the parts' accumulators: see docs/scale.md.
package pipelines

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	// Local paths; remote filesystems are registered by the binary.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"

	"github.com/parscope/parscope/internal/atomicfile"
	"github.com/parscope/parscope/store"
)

// isRemote tells whether path names a Beam filesystem other than the local
// one (gs://..., s3://..., hdfs://...).
func isRemote(path string) bool {
	scheme, _, ok := strings.Cut(path, "://")
	return ok && scheme != "" && scheme != "file"
}

// stores caches the stores a worker process opened, by input path: a
// worker runs many bundles of the same pipeline.
var stores = struct {
	sync.Mutex
	m map[string]*store.Store
}{m: map[string]*store.Store{}}

// openStore opens the .pst at input for a worker, copying it from a remote
// filesystem to a local temporary directory first. The store stays open
// (and cached) for the worker's lifetime.
func openStore(ctx context.Context, input string) (*store.Store, error) {
	stores.Lock()
	defer stores.Unlock()
	if s, ok := stores.m[input]; ok {
		return s, nil
	}
	dir := input
	if isRemote(input) {
		var err error
		if dir, err = fetch(ctx, input); err != nil {
			return nil, err
		}
	}
	if err := Check(dir); err != nil {
		return nil, err
	}
	s, err := store.Open(dir)
	if err != nil {
		return nil, err
	}
	stores.m[input] = s
	return s, nil
}

// Check refuses a .pst whose manifest is not readable by this parscope
// (another format, a newer version) or whose shards are missing: every
// table the manifest lists and the process index must exist. The error
// names the .pst and the missing files.
func Check(dir string) error {
	m, err := store.ReadManifest(dir)
	if err != nil {
		return err
	}
	var missing []string
	want := []string{"index.parquet"}
	for _, t := range m.Tables {
		want = append(want, t.File)
	}
	sort.Strings(want)
	for _, f := range want {
		if _, err := os.Stat(filepath.Join(dir, f)); errors.Is(err, os.ErrNotExist) {
			missing = append(missing, f)
		} else if err != nil {
			return err
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: missing shards (the manifest lists them but they are not in the directory): %s", dir, strings.Join(missing, ", "))
	}
	return nil
}

// fetch copies the files of the remote .pst directory input to a local
// temporary directory and returns it.
func fetch(ctx context.Context, input string) (string, error) {
	fs, err := filesystem.New(ctx, input)
	if err != nil {
		return "", fmt.Errorf("%s: %w", input, err)
	}
	defer fs.Close()
	base := strings.TrimSuffix(input, "/") + "/"
	files, err := fs.List(ctx, base+"*")
	if err != nil {
		return "", fmt.Errorf("%s: listing the .pst: %w", input, err)
	}
	if len(files) == 0 {
		return "", fmt.Errorf("%s: no files (is it a .pst directory?)", input)
	}
	dir, err := os.MkdirTemp("", "parscope-beam-*.pst")
	if err != nil {
		return "", err
	}
	for _, f := range files {
		name := f[strings.LastIndex(f, "/")+1:]
		if err := copyFile(ctx, fs, f, filepath.Join(dir, name)); err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("%s: %w", f, err)
		}
	}
	return dir, nil
}

func copyFile(ctx context.Context, fs filesystem.Interface, from, to string) error {
	r, err := fs.OpenRead(ctx, from)
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// WriteOutput writes data to path: on the local filesystem as every
// parscope output is written (package atomicfile: a temporary file synced
// and renamed into place, mode 0644, errors naming path, only a regular
// file replaced), on a remote one through its Beam filesystem.
func WriteOutput(ctx context.Context, path string, data []byte) error {
	if !isRemote(path) {
		return atomicfile.WriteFile(path, data, atomicfile.RegularFile)
	}
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer fs.Close()
	w, err := fs.OpenWrite(ctx, path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return w.Close()
}
