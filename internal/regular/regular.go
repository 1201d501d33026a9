// Package regular opens files that must be regular files: a named pipe, a
// device or a socket in place of an input or a table would block a read
// forever or never end, so they are refused with an error that says what
// the path is instead.
package regular

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Check returns an error when path (followed through symbolic links) exists
// but is not a regular file. It does not open the file, so a named pipe is
// not touched.
func Check(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return check(path, fi.Mode())
}

// CheckMode returns an error naming path when m (the mode of the file at
// path, from a Stat already made) is not that of a regular file.
func CheckMode(path string, m fs.FileMode) error { return check(path, m) }

func check(path string, m fs.FileMode) error {
	if m.IsRegular() {
		return nil
	}
	return fmt.Errorf("%s is %s, not a regular file (expected a file to read)", path, describe(m))
}

func describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file (mode " + m.String() + ")"
}

// Open opens path for reading after checking that it is a regular file,
// and checks again on the opened file.
func Open(path string) (*os.File, error) {
	if err := Check(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = check(path, fi.Mode())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile reads the whole of a regular file, like os.ReadFile.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
