package probe

import (
	"bytes"
	"encoding/gob"
)

// EncodeState encodes a task's state (a struct of exported fields) with
// encoding/gob: a Snapshot in one line.
func EncodeState(v any) ([]byte, error) {
	var buf bytes.Buffer
	err := gob.NewEncoder(&buf).Encode(v)
	return buf.Bytes(), err
}

// DecodeState decodes what EncodeState wrote into v (a pointer): the first
// half of a Restore, before the task checks that the state fits it.
func DecodeState(b []byte, v any) error {
	return gob.NewDecoder(bytes.NewReader(b)).Decode(v)
}
