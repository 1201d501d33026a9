package probe

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os/exec"
)

// goBuildIDNote is the ELF note type of the Go build ID
// (cmd/internal/buildid's elfGoBuildIDTag).
const goBuildIDNote = 4

// GoBuildID returns the Go build ID that the go command recorded in the
// ELF executable that path names (looked up in PATH when it has no
// slash), or "" when it is not an ELF file or has no Go build ID note.
//
// The go command derives the ID's second half from the linked file's
// content, so two executables with the same ID are the same build; reading
// it costs a few section headers instead of hashing the whole file (20 MB
// for a worker that links the instrument library: about 13 ms).
func GoBuildID(path string) (string, error) {
	p, err := exec.LookPath(path)
	if err != nil {
		return "", err
	}
	f, err := elf.Open(p)
	if err != nil {
		var fe *elf.FormatError
		if errors.As(err, &fe) {
			return "", nil // not ELF: no build ID to read
		}
		return "", err
	}
	defer f.Close()
	s := f.Section(".note.go.buildid")
	if s == nil || s.Type != elf.SHT_NOTE || s.Size > 1<<12 {
		return "", nil
	}
	b, err := s.Data()
	if err != nil {
		return "", fmt.Errorf("%s: reading its Go build ID note: %w", p, err)
	}
	return parseGoBuildIDNote(b, f.ByteOrder), nil
}

// parseGoBuildIDNote reads the build ID from the contents of a
// .note.go.buildid section: name size, descriptor size, type, the name
// "Go" padded to 4 bytes, the descriptor. It returns "" for anything else.
func parseGoBuildIDNote(b []byte, order interface{ Uint32([]byte) uint32 }) string {
	if len(b) < 16 {
		return ""
	}
	namesz, descsz, typ := order.Uint32(b), order.Uint32(b[4:]), order.Uint32(b[8:])
	if namesz != 4 || typ != goBuildIDNote || !bytes.Equal(b[12:16], []byte("Go\x00\x00")) {
		return ""
	}
	if uint64(descsz) > uint64(len(b)-16) {
		return ""
	}
	return string(b[16 : 16+descsz])
}
