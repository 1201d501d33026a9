// Package atomicfile writes a file or a whole directory so that whoever
// looks at the destination sees either what was there before or the
// complete new result, never a mixture or a partial file, whatever happens
// in between (an error, a full disk, kill -9, a power cut; WriteFileUnsynced
// gives up the power cut).
//
// The new content is written under a temporary name beside the
// destination (the same directory, so that the final step is a rename
// within one file system), every file and directory of it is fsynced, it
// is renamed into place, and the parent directory is fsynced so that the
// rename itself is durable.
//
// Temporary names are ".NAME.parscope-tmp-PID-RANDOM" (and
// ".NAME.parscope-old-PID-RANDOM" for a directory being replaced). A
// process killed before Commit leaves one behind; the next write to the
// same destination removes the temporaries of processes that no longer
// run, and puts back an old directory that a crash left set aside.
//
// Errors name the destination, never a temporary name. A caller that
// writes files into a Dir's Path() itself passes its errors through
// Dir.Hide, which puts the destination in place of the temporary name.
//
// Every file written gets mode 0644 and every directory 0755, whatever the
// temporary file functions of the os package use and whatever mode the
// writer of a directory's content gave its files: a directory's whole tree
// is set to these modes at Commit. The modes are set with chmod, so the
// umask does not change them: every output of parscope has the same
// permissions.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Modes of everything written.
const (
	FileMode fs.FileMode = 0o644
	DirMode  fs.FileMode = 0o755
)

const (
	tmpMark = ".parscope-tmp-"
	oldMark = ".parscope-old-"
)

// Replace decides whether the existing entry at path may be replaced; it
// returns nil to allow it, or an error saying why not. A nil Replace allows
// nothing: an existing destination is an error.
type Replace func(path string) error

// RegularFile allows replacing a regular file (not a directory, a symbolic
// link, a device or a pipe).
func RegularFile(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s exists and is %s, not a file parscope writes; refusing to replace it", path, describe(fi))
	}
	return nil
}

// EmptyDir allows replacing an empty directory.
func EmptyDir(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s exists and is %s, not a directory; refusing to replace it", path, describe(fi))
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("%s is a directory that is not empty and not one parscope wrote; refusing to replace it", path)
	}
	return nil
}

// EmptyDirOr allows replacing an empty directory, or an entry that ours
// allows given what os.Lstat says of it: typically a directory the caller
// recognises as one it wrote.
func EmptyDirOr(ours func(path string, fi fs.FileInfo) error) Replace {
	return func(path string) error {
		if EmptyDir(path) == nil {
			return nil
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		return ours(path, fi)
	}
}

func describe(fi fs.FileInfo) string {
	switch m := fi.Mode(); {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsRegular():
		return "a file"
	default:
		return "a special file"
	}
}

// check applies replace to an existing path; a missing path is fine.
func check(path string, replace Replace) error {
	if _, err := os.Lstat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if replace == nil {
		return fmt.Errorf("%s already exists", path)
	}
	return replace(path)
}

// File is a file being written under a temporary name. Write to it, then
// Commit to put it in place or Abort to drop it. Abort after Commit does
// nothing, so `defer f.Abort()` is the usual pattern.
type File struct {
	f       *os.File
	path    string
	replace Replace
	done    bool
}

// Create starts writing the file at path. An existing file is replaced at
// Commit if replace allows it (checked here and again at Commit).
func Create(path string, replace Replace) (*File, error) {
	path, dir, base := split(path)
	cleanStale(dir, base)
	if err := check(path, replace); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, tempPattern(base, tmpMark))
	if err != nil {
		return nil, about(err, "create", path)
	}
	return &File{f: f, path: path, replace: replace}, nil
}

// Write writes p to the temporary file.
func (f *File) Write(p []byte) (int, error) {
	n, err := writeHook(f.f, p)
	if err != nil {
		err = rename(err, "write", f.path)
	}
	return n, err
}

// writeHook writes to a temporary file; tests replace it to simulate a
// full disk.
var writeHook = func(f *os.File, p []byte) (int, error) { return f.Write(p) }

// Name returns the destination path (not the temporary name).
func (f *File) Name() string { return f.path }

// Commit fsyncs the file, renames it into place and fsyncs the directory.
// On error the destination is untouched and the temporary file removed.
func (f *File) Commit() error { return f.commit(true) }

// commit is Commit, with or without the fsyncs.
func (f *File) commit(sync bool) error {
	if f.done {
		return fmt.Errorf("%s: already committed or aborted", f.path)
	}
	f.done = true
	tmp := f.f.Name()
	err := f.f.Chmod(FileMode)
	if err == nil && sync {
		err = f.f.Sync()
	}
	if e := f.f.Close(); err == nil {
		err = e
	}
	if err == nil {
		err = check(f.path, f.replace)
	}
	if err == nil {
		if err = os.Rename(tmp, f.path); err != nil {
			err = rename(err, "rename", f.path)
		}
	}
	if err != nil {
		os.Remove(tmp)
		return rename(err, "write", f.path)
	}
	if !sync {
		return nil
	}
	return syncDir(filepath.Dir(f.path))
}

// Abort drops the temporary file. It does nothing after Commit.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.f.Close()
	os.Remove(f.f.Name())
}

// WriteFile writes data to path atomically (see Create and Commit).
func WriteFile(path string, data []byte, replace Replace) error {
	return writeFile(path, data, replace, true)
}

// WriteFileUnsynced is WriteFile without the fsyncs: whoever looks at path
// sees the old content or the new, whatever happens to the writing program
// (an error, a full disk, kill -9), but after a power cut or a kernel crash
// the file may hold neither. It is for data that the writer keeps no more
// durably than the kernel's page cache anyway (a recording's spill), where
// two fsyncs would cost more than the write.
func WriteFileUnsynced(path string, data []byte, replace Replace) error {
	return writeFile(path, data, replace, false)
}

// writeFile is WriteFile, with or without the fsyncs.
func writeFile(path string, data []byte, replace Replace, sync bool) error {
	f, err := Create(path, replace)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.commit(sync)
}

// Write calls fill with a buffered writer for path and commits the file
// only if fill succeeds.
func Write(path string, replace Replace, fill func(w *bufio.Writer) error) error {
	f, err := Create(path, replace)
	if err != nil {
		return err
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := fill(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Commit()
}

// Scratch creates an empty scratch file beside path for a writer of path
// to use on the way (the caller closes and removes it). It is named like
// the temporaries of path, so that the next write to path removes it if
// the process dies first.
func Scratch(path string) (*os.File, error) {
	path, dir, base := split(path)
	f, err := os.CreateTemp(dir, tempPattern(base, tmpMark))
	if err != nil {
		return nil, about(err, "create", path)
	}
	return f, nil
}

// Dir is a directory being written under a temporary name: write into
// Path(), then Commit to put the whole directory in place or Abort to drop
// it.
type Dir struct {
	tmp     string
	path    string
	replace Replace
	done    bool
}

// CreateDir starts writing the directory at path, creating an empty
// temporary directory beside it (and the missing parents of path, as
// mkdir -p). An existing entry at path is replaced at Commit if replace
// allows it (checked here and again at Commit).
func CreateDir(path string, replace Replace) (*Dir, error) {
	path, dir, base := split(path)
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return nil, err
	}
	cleanStale(dir, base)
	if err := check(path, replace); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(dir, tempPattern(base, tmpMark))
	if err != nil {
		return nil, about(err, "mkdir", path)
	}
	if err := os.Chmod(tmp, DirMode); err != nil {
		os.Remove(tmp)
		return nil, rename(err, "mkdir", path)
	}
	return &Dir{tmp: tmp, path: path, replace: replace}, nil
}

// Path is the temporary directory to write the content into.
func (d *Dir) Path() string { return d.tmp }

// Dest is the destination path.
func (d *Dir) Dest() string { return d.path }

// Hide returns err with the temporary directory's name replaced by the
// destination's wherever its message shows it, so that an error about a
// file written into Path() (a full disk, say) names that file in the
// destination. errors.Is and errors.As still see the original error; nil
// and errors that do not mention Path() are returned as they are.
func (d *Dir) Hide(err error) error {
	if err == nil || !strings.Contains(err.Error(), d.tmp) {
		return err
	}
	return &hidden{msg: strings.ReplaceAll(err.Error(), d.tmp, d.path), err: err}
}

// hidden is an error whose message names the destination instead of the
// temporary directory it wraps an error about.
type hidden struct {
	msg string
	err error
}

func (h *hidden) Error() string { return h.msg }
func (h *hidden) Unwrap() error { return h.err }

// Commit gives every file and directory under Path() its mode (FileMode,
// DirMode) and fsyncs it, then puts the
// directory in place: when nothing is at the destination, by one rename;
// otherwise the old directory is renamed aside, the new one renamed in,
// and the old one removed. A crash between the two renames leaves the
// destination missing, the old content under ".NAME.parscope-old-*" and
// the new one under ".NAME.parscope-tmp-*"; the next write to the same
// destination renames the old one back and removes the other, so the
// previous result survives. On error the destination is untouched and the
// temporary directory removed.
func (d *Dir) Commit() error {
	if d.done {
		return fmt.Errorf("%s: already committed or aborted", d.path)
	}
	d.done = true
	err := settleTree(d.tmp)
	if err == nil {
		err = check(d.path, d.replace)
	}
	if err != nil {
		os.RemoveAll(d.tmp)
		return rename(err, "write", d.path)
	}
	parent := filepath.Dir(d.path)
	if _, err := os.Lstat(d.path); err != nil {
		if err := os.Rename(d.tmp, d.path); err != nil {
			os.RemoveAll(d.tmp)
			return rename(err, "rename", d.path)
		}
		return syncDir(parent)
	}
	tb := filepath.Base(d.tmp)
	i := strings.LastIndex(tb, tmpMark)
	old := filepath.Join(parent, tb[:i]+oldMark+tb[i+len(tmpMark):])
	if err := os.Rename(d.path, old); err != nil {
		os.RemoveAll(d.tmp)
		return rename(err, "rename", d.path)
	}
	if err := os.Rename(d.tmp, d.path); err != nil {
		_ = os.Rename(old, d.path)
		os.RemoveAll(d.tmp)
		return rename(err, "rename", d.path)
	}
	if err := syncDir(parent); err != nil {
		return err
	}
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("%s is written, but the old one could not be removed: %w", d.path, err)
	}
	return nil
}

// Abort removes the temporary directory. It does nothing after Commit.
func (d *Dir) Abort() {
	if d.done {
		return
	}
	d.done = true
	os.RemoveAll(d.tmp)
}

func tempPattern(base, mark string) string {
	return "." + base + mark + strconv.Itoa(os.Getpid()) + "-*"
}

// cleanStale removes the temporaries for destination base in dir that a
// process which no longer runs left behind, and renames back an old
// directory set aside by a Commit that did not finish (when nothing is at
// the destination). Failures are ignored: a stale file only costs space.
func cleanStale(dir, base string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	dest := filepath.Join(dir, base)
	for _, e := range ents {
		name := e.Name()
		for _, mark := range []string{oldMark, tmpMark} {
			prefix := "." + base + mark
			if !strings.HasPrefix(name, prefix) {
				continue
			}
			pidStr, _, ok := strings.Cut(name[len(prefix):], "-")
			pid, err := strconv.Atoi(pidStr)
			if !ok || err != nil || pid <= 0 || alive(pid) {
				continue
			}
			p := filepath.Join(dir, name)
			if mark == oldMark {
				if _, err := os.Lstat(dest); errors.Is(err, fs.ErrNotExist) && os.Rename(p, dest) == nil {
					continue
				}
			}
			os.RemoveAll(p)
		}
	}
}

// settleTree gives every regular file under root FileMode and every
// directory DirMode, and fsyncs them, deepest first, root last.
func settleTree(root string) error {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case e.IsDir():
			dirs = append(dirs, p)
		case e.Type().IsRegular():
			if err := os.Chmod(p, FileMode); err != nil {
				return err
			}
			return syncFile(p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chmod(dirs[i], DirMode); err != nil {
			return err
		}
		if err := syncDir(dirs[i]); err != nil {
			return err
		}
	}
	return nil
}

func syncFile(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	err = f.Sync()
	if e := f.Close(); err == nil {
		err = e
	}
	return err
}

// syncDir fsyncs a directory, making the names in it durable. File systems
// that cannot sync a directory (EINVAL) are not an error.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, errSyncUnsupported) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// split cleans path and returns it with its directory ("." for a bare
// name) and its base name, where the temporary entries beside it go.
func split(path string) (clean, dir, base string) {
	clean = filepath.Clean(path)
	dir, base = filepath.Split(clean)
	if dir == "" {
		dir = "."
	}
	return clean, dir, base
}

// Cause returns what went wrong in err without the file it names: the
// error inside a *fs.PathError ("no space left on device"), or err itself.
// Callers that name the destination themselves use it on errors about a
// temporary file, so that its name never shows.
func Cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// about turns any *fs.PathError (from creating a temporary beside path)
// into one about path.
func about(err error, op, path string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: op, Path: path, Err: pe.Err}
	}
	return err
}

// rename turns an error about a temporary name into one about path, so
// that users never see a temporary name: a *fs.PathError or *os.LinkError
// becomes a *fs.PathError for path with the same cause.
func rename(err error, op, path string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && strings.Contains(filepath.Base(pe.Path), tmpMark) {
		return &fs.PathError{Op: op, Path: path, Err: pe.Err}
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return &fs.PathError{Op: op, Path: path, Err: le.Err}
	}
	return err
}
