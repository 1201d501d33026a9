package probe

// vgRequest issues a valgrind client request: args[0] is the request code,
// args[1:] its arguments. It returns the tool's answer, 0 when the process
// does not run under valgrind.
//
//go:noescape
func vgRequest(args *[6]uintptr) uintptr

// vgSupported reports whether client requests are implemented on this
// architecture.
const vgSupported = true
