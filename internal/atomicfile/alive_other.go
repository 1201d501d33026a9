//go:build !unix

package atomicfile

import "errors"

// alive reports whether process pid may run. Without a portable way to
// ask, every process is assumed alive, so stale temporaries are kept.
func alive(pid int) bool { return true }

// errSyncUnsupported stands for the error of an fsync of a directory on
// file systems that do not support it; other systems report no such error.
var errSyncUnsupported = errors.New("directory sync unsupported")
