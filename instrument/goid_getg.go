//go:build amd64 || arm64

package instrument

import "unsafe"

const haveGetg = true

// getg returns the calling goroutine's runtime descriptor (goid_*.s).
func getg() unsafe.Pointer
