//go:build !amd64

package probe

// vgRequest is a no-op on architectures without an implementation of
// valgrind's client request sequence: it returns 0, as natively.
func vgRequest(args *[6]uintptr) uintptr { return 0 }

// vgSupported reports whether client requests are implemented on this
// architecture.
const vgSupported = false
