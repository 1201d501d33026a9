package probe

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/internal/atomicfile"
)

// A probe file is one archive:
//
//	offset 0   "PSPROBE1"                    magic, 8 bytes
//	offset 8   uint32 little endian M        length of the manifest
//	offset 12  M bytes of JSON               the Manifest
//	           the snapshots, zstd frames    at the offsets the manifest gives
//	last 32    SHA-256 of everything before  checksum
//
// Snapshot offsets are relative to the end of the manifest. Each snapshot
// also carries the SHA-256 of its uncompressed bytes.

// Magic starts every probe file.
const Magic = "PSPROBE1"

// FormatVersion is the version of the manifest written (Manifest.Format).
const FormatVersion = 1

const (
	headerLen   = len(Magic) + 4
	checksumLen = sha256.Size
	// maxManifest bounds the manifest a reader accepts.
	maxManifest = 64 << 20
	// maxSnapshot bounds one uncompressed snapshot a reader accepts.
	maxSnapshot = 16 << 30
)

// Manifest describes a probe: the worker it was built from, the reference
// measurements and the phases.
type Manifest struct {
	// Format is FormatVersion.
	Format int `json:"format"`
	// Worker identifies the worker and how it was run.
	Worker Worker `json:"worker"`
	// Clock is what every time of the probe measures (wall or cpu).
	Clock Clock `json:"clock"`
	// Interval is the interval size in blocks; WarmUp the blocks run before
	// an interval to warm caches and predictors after a restore.
	Interval int64 `json:"interval_blocks"`
	WarmUp   int64 `json:"warmup_blocks"`
	// Intervals is the number of intervals of the reference run;
	// TotalBlocks and TotalSteps its size.
	Intervals   int   `json:"intervals"`
	TotalBlocks int64 `json:"total_blocks"`
	TotalSteps  int64 `json:"total_steps"`
	// ETRef is the counted (instrumented) reference run time and
	// ETUninstRef the uninstrumented one (the mean of the reference's
	// uninstrumented runs), in seconds (eq. 4.3).
	ETRef       float64 `json:"et_ref_s"`
	ETUninstRef float64 `json:"et_uninst_ref_s"`
	// ETVectors is the time of the basic block vector run (not used in the
	// prediction; shows what the vector instrumentation costs).
	ETVectors float64 `json:"et_vectors_s"`
	// K is the number of phases the phase engine chose; Engine describes
	// its settings.
	K      int    `json:"k"`
	Engine string `json:"engine"`
	// Phases holds every phase found, kept or dropped.
	Phases []Phase `json:"phases"`
	// Reduction says how the probe was reduced, if it was.
	Reduction string `json:"reduction,omitempty"`
	// Created is the build time (RFC 3339) and Host the reference machine.
	Created string `json:"created"`
	Host    string `json:"host"`
}

// Worker identifies the worker a probe belongs to.
type Worker struct {
	// Info is what the worker says it is (probe.Main's argument).
	Info
	// Path is the program as given on the command line and SHA256 the
	// hash of its executable file; GoBuildID is the build ID the go
	// command recorded in it, when it has one (see GoBuildID).
	Path      string `json:"path"`
	SHA256    string `json:"sha256"`
	GoBuildID string `json:"go_build_id,omitempty"`
	// Args are the program's arguments (after the program).
	Args []string `json:"args"`
}

// Phase is one phase of the reference run.
type Phase struct {
	// ID is the phase engine's cluster id.
	ID int `json:"id"`
	// Weight is the phase's share of the intervals (SimPoint's weight);
	// TimeShare its share of the counted reference run's time.
	Weight    float64 `json:"weight"`
	TimeShare float64 `json:"time_share"`
	// Size is the number of intervals in the phase; Representative the
	// interval measured.
	Size           int `json:"size"`
	Representative int `json:"representative"`
	// SnapshotStep is the step count at which the snapshot was saved;
	// StartStep and EndStep delimit the representative interval's steps.
	SnapshotStep int64 `json:"snapshot_step"`
	StartStep    int64 `json:"start_step"`
	EndStep      int64 `json:"end_step"`
	// WarmBlocks and Blocks are the blocks of the warm-up and of the
	// interval.
	WarmBlocks int64 `json:"warm_blocks"`
	Blocks     int64 `json:"blocks"`
	// TPhaseRef is the interval's time on the reference (s): the mean
	// of RefSamples replays of the snapshot, measured as on a target,
	// with TPhaseRefErr the standard error of that mean; TIntervalRef is
	// its time in the uninterrupted counted run, for comparison.
	TPhaseRef    float64 `json:"t_phase_ref_s"`
	TPhaseRefErr float64 `json:"t_phase_ref_stderr_s,omitempty"`
	RefSamples   int     `json:"ref_samples,omitempty"`
	TIntervalRef float64 `json:"t_interval_ref_s"`
	// Snapshot locates the phase's state; nil when the phase was dropped
	// by a reduction.
	Snapshot *Snapshot `json:"snapshot,omitempty"`
}

// Snapshot locates one compressed snapshot in the file.
type Snapshot struct {
	Offset  int64  `json:"offset"`
	Size    int64  `json:"size"`
	RawSize int64  `json:"raw_size"`
	SHA256  string `json:"sha256"`
}

// Probe is a probe in memory: its manifest and its compressed snapshots.
type Probe struct {
	Manifest Manifest
	// blobs holds the compressed snapshot of each phase (by index in
	// Manifest.Phases); nil for a dropped phase.
	blobs [][]byte
}

// Kept reports whether phase i carries a snapshot.
func (p *Probe) Kept(i int) bool { return p.Manifest.Phases[i].Snapshot != nil }

// SnapshotBytes returns phase i's snapshot, uncompressed and verified
// against its checksum.
func (p *Probe) SnapshotBytes(i int) ([]byte, error) {
	s := p.Manifest.Phases[i].Snapshot
	if s == nil {
		return nil, fmt.Errorf("phase %d has no snapshot (the probe was reduced)", p.Manifest.Phases[i].ID)
	}
	raw, err := decodeSnapshot(p.blobs[i], s.RawSize, s.SHA256)
	if err != nil {
		return nil, fmt.Errorf("phase %d: snapshot at offset %d: %w", p.Manifest.Phases[i].ID, s.Offset, err)
	}
	return raw, nil
}

// decodeSnapshot decompresses a snapshot and checks its size and, unless
// sum is empty, its SHA-256. (The decoder also checks the zstd frame's own
// checksum of its content, which SetSnapshot writes.)
func decodeSnapshot(blob []byte, rawSize int64, sum string) ([]byte, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(uint64(max(rawSize+1<<20, 8<<20))), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	raw, err := dec.DecodeAll(blob, make([]byte, 0, min(rawSize, 64<<20)))
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) != rawSize || (sum != "" && hashHex(raw) != sum) {
		return nil, errors.New("its size or SHA-256 does not match the manifest")
	}
	return raw, nil
}

// blob returns phase i's compressed snapshot (nil when dropped).
func (p *Probe) blob(i int) []byte {
	if i < len(p.blobs) {
		return p.blobs[i]
	}
	return nil
}

// SetSnapshot compresses state into phase i's snapshot.
func (p *Probe) SetSnapshot(i int, state []byte) error {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return err
	}
	defer enc.Close()
	for len(p.blobs) < len(p.Manifest.Phases) {
		p.blobs = append(p.blobs, nil)
	}
	p.blobs[i] = enc.EncodeAll(state, nil)
	p.Manifest.Phases[i].Snapshot = &Snapshot{Size: int64(len(p.blobs[i])), RawSize: int64(len(state)), SHA256: hashHex(state)}
	return nil
}

// Drop removes phase i's snapshot.
func (p *Probe) Drop(i int) {
	p.Manifest.Phases[i].Snapshot = nil
	if i < len(p.blobs) {
		p.blobs[i] = nil
	}
}

// Sizes returns the compressed and uncompressed bytes of the snapshots
// the probe carries.
func (p *Probe) Sizes() (compressed, raw int64) {
	for _, ph := range p.Manifest.Phases {
		if ph.Snapshot != nil {
			compressed += ph.Snapshot.Size
			raw += ph.Snapshot.RawSize
		}
	}
	return compressed, raw
}

// Clone returns a copy of p whose manifest can be changed independently.
func (p *Probe) Clone() *Probe {
	q := &Probe{Manifest: p.Manifest, blobs: append([][]byte(nil), p.blobs...)}
	q.Manifest.Phases = append([]Phase(nil), p.Manifest.Phases...)
	q.Manifest.Worker.Args = append([]string(nil), p.Manifest.Worker.Args...)
	return q
}

// Marshal encodes the probe file.
func (p *Probe) Marshal() ([]byte, error) {
	var blobs bytes.Buffer
	for i := range p.Manifest.Phases {
		s := p.Manifest.Phases[i].Snapshot
		if s == nil {
			continue
		}
		if i >= len(p.blobs) || int64(len(p.blobs[i])) != s.Size {
			return nil, fmt.Errorf("phase %d: snapshot data missing", p.Manifest.Phases[i].ID)
		}
		s.Offset = int64(blobs.Len())
		blobs.Write(p.blobs[i])
	}
	m, err := json.MarshalIndent(&p.Manifest, "", "  ")
	if err != nil {
		return nil, err
	}
	if len(m) > maxManifest {
		return nil, fmt.Errorf("manifest of %d bytes is too large", len(m))
	}
	out := make([]byte, 0, headerLen+len(m)+blobs.Len()+checksumLen)
	out = append(out, Magic...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(m)))
	out = append(out, m...)
	out = append(out, blobs.Bytes()...)
	sum := sha256.Sum256(out)
	return append(out, sum[:]...), nil
}

// WriteFile writes the probe to path atomically (see package atomicfile):
// a failure or a crash leaves an existing file untouched. It replaces an
// existing file only when that is a probe file (it starts with Magic).
func (p *Probe) WriteFile(path string) error {
	b, err := p.Marshal()
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b, replaceableProbe)
}

// replaceableProbe allows replacing path only when it is a probe file.
func replaceableProbe(path string) error {
	if err := atomicfile.RegularFile(path); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, len(Magic))
	if _, err := io.ReadFull(f, head); err != nil || string(head) != Magic {
		return fmt.Errorf("%s exists and is not a probe file (it does not start with %q); refusing to replace it", path, Magic)
	}
	return nil
}

// ErrChecksum is wrapped by the error for a probe file whose checksum does
// not match its contents.
var ErrChecksum = errors.New("checksum mismatch: the probe file is corrupted")

// ReadFile reads and checks a probe file.
func ReadFile(path string) (*Probe, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := Unmarshal(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Unmarshal decodes and checks a probe file: its magic, its checksum, its
// manifest and where every snapshot lies. Errors give the byte offset.
func Unmarshal(b []byte) (*Probe, error) {
	if len(b) < headerLen+checksumLen {
		return nil, fmt.Errorf("offset 0: %d bytes is too short for a probe file (at least %d)", len(b), headerLen+checksumLen)
	}
	if string(b[:len(Magic)]) != Magic {
		return nil, fmt.Errorf("offset 0: expected the magic %q, found %q", Magic, b[:len(Magic)])
	}
	body := b[:len(b)-checksumLen]
	sum := sha256.Sum256(body)
	if !bytes.Equal(sum[:], b[len(body):]) {
		return nil, fmt.Errorf("offset %d: %w (stored %x, computed %x)", len(body), ErrChecksum, b[len(body):], sum)
	}
	m := int64(binary.LittleEndian.Uint32(b[len(Magic):]))
	if m > maxManifest || int64(headerLen)+m > int64(len(body)) {
		return nil, fmt.Errorf("offset %d: manifest length %d runs past the end of the data (%d bytes)", len(Magic), m, len(body))
	}
	p := &Probe{}
	dec := json.NewDecoder(bytes.NewReader(body[headerLen : int64(headerLen)+m]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p.Manifest); err != nil {
		return nil, fmt.Errorf("offset %d: manifest: %w", headerLen, format.ClipError(err))
	}
	if err := p.Manifest.validate(); err != nil {
		return nil, fmt.Errorf("offset %d: manifest: %w", headerLen, err)
	}
	blobs := body[int64(headerLen)+m:]
	p.blobs = make([][]byte, len(p.Manifest.Phases))
	for i, ph := range p.Manifest.Phases {
		s := ph.Snapshot
		if s == nil {
			continue
		}
		if s.Offset < 0 || s.Size < 0 || s.Offset > int64(len(blobs)) || s.Size > int64(len(blobs))-s.Offset {
			return nil, fmt.Errorf("offset %d: manifest: phase %d's snapshot (offset %d, %d bytes) lies outside the %d bytes of snapshots",
				headerLen, ph.ID, s.Offset, s.Size, len(blobs))
		}
		p.blobs[i] = blobs[s.Offset : s.Offset+s.Size]
	}
	return p, nil
}

// validate checks what the prediction relies on.
func (m *Manifest) validate() error {
	if m.Format != FormatVersion {
		return fmt.Errorf("format %d: this parscope reads format %d", m.Format, FormatVersion)
	}
	if _, err := ParseClock(string(m.Clock)); err != nil {
		return err
	}
	if m.Worker.Name == "" {
		return errors.New("worker name missing")
	}
	if m.Interval < 1 || m.WarmUp < 0 {
		return fmt.Errorf("interval %d, warm-up %d: want a positive interval and a non-negative warm-up", m.Interval, m.WarmUp)
	}
	if err := checkRef(m.ETRef, m.ETUninstRef); err != nil {
		return err
	}
	if len(m.Phases) == 0 {
		return errors.New("no phases")
	}
	for _, ph := range m.Phases {
		t := PhaseTerm{Weight: ph.Weight, TPhaseRef: ph.TPhaseRef}
		if ph.Snapshot == nil {
			t.TPhaseRef = 1 // a dropped phase is never measured
		}
		if err := t.check(); err != nil {
			return fmt.Errorf("phase %d: %w", ph.ID, err)
		}
		if !(ph.TimeShare >= 0 && ph.TimeShare <= 1+1e-9) {
			return fmt.Errorf("phase %d: time share %g: want a value in [0, 1]", ph.ID, ph.TimeShare)
		}
		if ph.Snapshot != nil && (ph.SnapshotStep < 0 || ph.StartStep < ph.SnapshotStep || ph.EndStep <= ph.StartStep || ph.Blocks < 1 || ph.WarmBlocks < 0) {
			return fmt.Errorf("phase %d: steps %d ≤ %d < %d, %d blocks: want a snapshot before a non-empty interval",
				ph.ID, ph.SnapshotStep, ph.StartStep, ph.EndStep, ph.Blocks)
		}
		if s := ph.Snapshot; s != nil && (s.RawSize < 0 || s.RawSize > maxSnapshot || len(s.SHA256) != 2*sha256.Size) {
			return fmt.Errorf("phase %d: snapshot of %d bytes with checksum %q: want at most %d bytes and a SHA-256", ph.ID, s.RawSize, format.Excerpt([]byte(s.SHA256)), int64(maxSnapshot))
		}
	}
	return nil
}

func hashHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
