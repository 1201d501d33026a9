package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
)

// Frame kinds of the master/worker protocol.
const (
	kindHello  byte = 1 // id = credit (tasks in flight), payload = "cluster/node"
	kindTask   byte = 2 // id = task id, payload = the task's data
	kindResult byte = 3 // id = task id, payload = the result
)

// headerSize is the frame header: kind, id, payload length. Task and
// result frames are sized so that the whole frame is S_Task or S_Result.
const headerSize = 9

type frame struct {
	kind    byte
	id      uint32
	payload []byte
}

// maxPayload guards against a corrupt length.
const maxPayload = 64 << 20

func writeFrame(w io.Writer, f frame) error {
	buf := make([]byte, headerSize+len(f.payload))
	buf[0] = f.kind
	binary.BigEndian.PutUint32(buf[1:], f.id)
	binary.BigEndian.PutUint32(buf[5:], uint32(len(f.payload)))
	copy(buf[headerSize:], f.payload)
	_, err := w.Write(buf)
	return err
}

func readFrame(r io.Reader) (frame, error) {
	var h [headerSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return frame{}, err
	}
	n := binary.BigEndian.Uint32(h[5:])
	if n > maxPayload {
		return frame{}, fmt.Errorf("frame of %d bytes", n)
	}
	f := frame{kind: h[0], id: binary.BigEndian.Uint32(h[1:]), payload: make([]byte, n)}
	_, err := io.ReadFull(r, f.payload)
	return f, err
}

// payloadSize is the payload that makes a frame size bytes on the wire.
func payloadSize(size int) int { return max(size-headerSize, 8) }

// taskData is task id's data: size bytes from a generator seeded by id.
func taskData(id uint32, size int) []byte {
	rng := rand.New(rand.NewPCG(uint64(id), 0x5eed004))
	b := make([]byte, size)
	for i := 0; i < len(b); i += 8 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], rng.Uint64())
		copy(b[i:], w[:])
	}
	return b
}

// compute is the worker's work on a task: a hash of its data, which the
// result carries in its first 8 bytes (padded to the result size).
func compute(data []byte, size int) []byte {
	h := fnv.New64a()
	h.Write(data)
	out := make([]byte, max(size, 8))
	binary.BigEndian.PutUint64(out, h.Sum64())
	return out
}

var errBadResult = errors.New("result does not match its task")

// checkResult verifies a result against the task it answers.
func checkResult(id uint32, taskSize int, result []byte) error {
	want := compute(taskData(id, taskSize), 8)
	if len(result) < 8 || binary.BigEndian.Uint64(result) != binary.BigEndian.Uint64(want) {
		return fmt.Errorf("task %d: %w", id, errBadResult)
	}
	return nil
}
