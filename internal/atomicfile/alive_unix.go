//go:build unix

package atomicfile

import (
	"errors"
	"syscall"
)

// alive reports whether process pid runs (or may: a process of another
// user answers EPERM).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// errSyncUnsupported is what fsync of a directory returns on file systems
// that do not support it.
var errSyncUnsupported = syscall.EINVAL
