package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
)

// Flink's checkpoint metadata (the _metadata file) as
// org.apache.flink.runtime.checkpoint.Checkpoints writes it: a magic number,
// a format version, then the version's payload. Flink 1.11 and later write
// version 3 (MetadataV3Serializer) or, from 1.17, version 4 (version 3's
// payload followed by the Java-serialized CheckpointProperties, which carry no
// state handle and are not read here).
//
// The payload is a tree of state handles (MetadataV2V3SerializerBase): state
// small enough (execution.checkpointing.data-inline-threshold, 20 KiB by
// default) is inlined in _metadata; everything else is a file the handle
// names: a FileStateHandle's absolute path (checkpoints), a
// RelativeFileStateHandle's path relative to the checkpoint's own directory
// (savepoints), the shared/ and private files of RocksDB's incremental
// checkpoints, changelog files, and the physical files of file merging. A
// restore opens every one of them, so a checkpoint is restorable only when
// they all exist.
const (
	metadataMagic    = 0x4960672d
	masterStateMagic = uint32(0xc96b1696)

	// MaxMetadataBytes bounds the _metadata read; Flink's are kilobytes to a
	// few megabytes (inlined state included).
	MaxMetadataBytes = 64 << 20
)

// State handle type tags (MetadataV2V3SerializerBase).
const (
	handleNull                         = 0
	handleByteStream                   = 1
	handleFileStream                   = 2
	handleKeyGroups                    = 3
	handlePartitionableOperator        = 4
	handleIncrementalKeyGroups         = 5
	handleRelativeStream               = 6
	handleSavepointKeyGroups           = 7
	handleChangelog                    = 8
	handleChangelogByteIncrement       = 9
	handleChangelogFileIncrement       = 10
	handleIncrementalKeyGroupsV2       = 11
	handleKeyGroupsV2                  = 12
	handleChangelogFileIncrementV2     = 13
	handleChangelogV2                  = 14
	handleSegmentFile                  = 15
	handleEmptySegmentFile             = 16
	handleSegmentPartitionableOperator = 17
)

const (
	maxHandleDepth       = 16
	unknownSize    int64 = -1
)

// ErrUnsupportedMetadata is wrapped when _metadata is in a format version
// this reader does not know (Flink before 1.11, or a newer format): its state
// files cannot be listed, so the checkpoint is not verified.
var ErrUnsupportedMetadata = errors.New("unsupported checkpoint metadata version")

// ErrCorruptMetadata is wrapped when _metadata is not a checkpoint's
// metadata or ends early: Flink cannot restore it either.
var ErrCorruptMetadata = errors.New("corrupt checkpoint metadata")

// Metadata is what a checkpoint's _metadata says about the files a restore
// reads.
type Metadata struct {
	// Version is the metadata format version.
	Version int
	// CheckpointID is the id of the checkpoint (or savepoint).
	CheckpointID int64
	// Files are the state files the handles reference, each once, in the order
	// first referenced.
	Files []StateFile
	// InlineBytes is the size of the state inlined in _metadata.
	InlineBytes int64
}

// StateFile is a file a checkpoint's state handle references.
type StateFile struct {
	// Path is the file's URI as Flink wrote it (relative paths resolved
	// against the checkpoint's directory).
	Path string
	// Size is the number of bytes the handle reads from it: the file's length
	// for a file handle, a lower bound for a segment of a merged file;
	// unknownSize (-1) when the handle does not say.
	Size int64
}

// ParseMetadata reads Flink checkpoint metadata from data. dir is the
// checkpoint's directory (chk-N/ or the savepoint's directory, the one holding
// _metadata) against which relative state handles resolve.
func ParseMetadata(data []byte, dir string) (Metadata, error) {
	r := &metaReader{data: data, dir: strings.TrimSuffix(dir, "/"), seen: map[string]int{}}
	if len(data) < 8 {
		return Metadata{}, fmt.Errorf("%w: %d bytes, not a checkpoint's metadata", ErrCorruptMetadata, len(data))
	}
	if magic := r.u32(); magic != metadataMagic {
		return Metadata{}, fmt.Errorf("%w: magic number %#x, not a checkpoint's metadata (%#x)", ErrCorruptMetadata, magic, metadataMagic)
	}
	m := Metadata{Version: int(r.i32())}
	if m.Version != 3 && m.Version != 4 {
		return m, fmt.Errorf("%w %d (this reader knows 3 and 4, Flink 1.11 and later)", ErrUnsupportedMetadata, m.Version)
	}
	r.metadata(&m)
	if r.err != nil {
		return Metadata{}, fmt.Errorf("%w: at byte %d of %d: %v", ErrCorruptMetadata, r.off, len(data), r.err)
	}
	m.Files, m.InlineBytes = r.files, r.inline
	return m, nil
}

// metaReader decodes Java's DataOutputStream encoding (big-endian) and
// records the first error; reads after it return zero values.
type metaReader struct {
	data   []byte
	off    int
	err    error
	dir    string
	files  []StateFile
	seen   map[string]int
	inline int64
}

func (r *metaReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *metaReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.data)-r.off {
		r.fail("%d bytes wanted, %d left", n, len(r.data)-r.off)
		return nil
	}
	b := r.data[r.off : r.off+n]
	r.off += n
	return b
}

func (r *metaReader) u8() byte {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *metaReader) u32() uint32 {
	if b := r.take(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

func (r *metaReader) i32() int32 { return int32(r.u32()) }

func (r *metaReader) i64() int64 {
	if b := r.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

// count reads a collection size; each element takes at least minBytes, so a
// count the remaining bytes cannot hold is corrupt (and never allocated).
func (r *metaReader) count(what string, minBytes int) int {
	n := r.i32()
	if r.err == nil && (n < 0 || int64(n)*int64(minBytes) > int64(len(r.data)-r.off)) {
		r.fail("%s count %d does not fit in the %d bytes left", what, n, len(r.data)-r.off)
		return 0
	}
	return int(n)
}

// utf reads a string written by DataOutput.writeUTF: an unsigned 16-bit
// length and Java's modified UTF-8 (NUL as 0xC0 0x80, characters outside the
// BMP as two encoded surrogates).
func (r *metaReader) utf() string {
	l := r.take(2)
	if l == nil {
		return ""
	}
	b := r.take(int(binary.BigEndian.Uint16(l)))
	if r.err != nil {
		return ""
	}
	units := make([]uint16, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c < 0x80:
			units = append(units, uint16(c))
			i++
		case c&0xE0 == 0xC0 && i+1 < len(b):
			units = append(units, uint16(c&0x1F)<<6|uint16(b[i+1]&0x3F))
			i += 2
		case c&0xF0 == 0xE0 && i+2 < len(b):
			units = append(units, uint16(c&0x0F)<<12|uint16(b[i+1]&0x3F)<<6|uint16(b[i+2]&0x3F))
			i += 3
		default:
			r.fail("malformed modified UTF-8 at byte %d of a string", i)
			return ""
		}
	}
	return string(utf16.Decode(units))
}

func (r *metaReader) skip(n int) { r.take(n) }

func (r *metaReader) addFile(p string, size int64) {
	if p == "" {
		r.fail("a file state handle without a path")
		return
	}
	if i, ok := r.seen[p]; ok {
		if size > r.files[i].Size {
			r.files[i].Size = size
		}
		return
	}
	r.seen[p] = len(r.files)
	r.files = append(r.files, StateFile{Path: p, Size: size})
}

func (r *metaReader) metadata(m *Metadata) {
	m.CheckpointID = r.i64()
	if r.err == nil && m.CheckpointID < 0 {
		r.fail("invalid checkpoint id %d", m.CheckpointID)
	}
	for range r.count("master state", 8) {
		if magic := r.u32(); r.err == nil && magic != masterStateMagic {
			r.fail("master state magic number %#x", magic)
		}
		n := r.i32()
		if r.err == nil && n <= 0 {
			r.fail("master state of %d bytes", n)
		}
		r.skip(int(n))
	}
	for range r.count("operator state", 28) {
		r.operatorState()
		if r.err != nil {
			return
		}
	}
}

// operatorState: MetadataV3Serializer.deserializeOperatorState.
func (r *metaReader) operatorState() {
	r.skip(8 + 8 + 4 + 4) // operator id, parallelism, max parallelism
	r.streamHandle(0)     // coordinator state (inline)
	n := r.i32()
	if n < 0 { // fully finished
		return
	}
	if int64(n)*4 > int64(len(r.data)-r.off) {
		r.fail("subtask count %d does not fit", n)
		return
	}
	for range int(n) {
		if idx := r.i32(); idx < 0 { // finished subtask: no state
			continue
		}
		r.subtaskState()
		if r.err != nil {
			return
		}
	}
}

// subtaskState: MetadataV2V3SerializerBase.deserializeSubtaskState and
// V3's channel state.
func (r *metaReader) subtaskState() {
	if r.i32() != 0 {
		r.operatorStateHandle()
	}
	if r.i32() != 0 {
		r.operatorStateHandle()
	}
	r.keyedHandle(0)
	r.keyedHandle(0)
	for range 2 { // input channel state, result subpartition state
		for range r.count("channel state", 25) {
			r.skip(4 + 4 + 4) // subtask index, gate/partition, channel/subpartition
			offsets := r.count("channel offset", 8)
			r.skip(8*offsets + 8) // offsets, size
			r.streamHandle(0)
		}
	}
}

func (r *metaReader) operatorStateHandle() {
	switch t := r.u8(); t {
	case handleNull:
	case handlePartitionableOperator, handleSegmentPartitionableOperator:
		for range r.count("operator state partition", 7) {
			r.utf()
			r.skip(1) // distribution mode
			r.skip(8 * r.count("partition offset", 8))
		}
		if t == handleSegmentPartitionableOperator {
			r.utf() // task-owned directory
			r.utf() // shared directory
			r.skip(1)
		}
		r.streamHandle(0)
	default:
		r.fail("unknown operator state handle type %d", t)
	}
}

func (r *metaReader) keyGroupOffsets() {
	r.skip(4) // start key group
	r.skip(8 * r.count("key group", 8))
}

func (r *metaReader) keyedHandle(depth int) {
	if depth > maxHandleDepth {
		r.fail("state handles nested deeper than %d", maxHandleDepth)
		return
	}
	switch t := r.u8(); t {
	case handleNull:
	case handleKeyGroups, handleKeyGroupsV2, handleSavepointKeyGroups:
		r.keyGroupOffsets()
		r.streamHandle(depth + 1)
		if t == handleKeyGroupsV2 {
			r.utf() // state handle id
		}
	case handleIncrementalKeyGroups, handleIncrementalKeyGroupsV2:
		r.skip(8) // checkpoint id
		r.utf()   // backend id
		r.skip(4 + 4)
		if t == handleIncrementalKeyGroupsV2 {
			r.skip(8) // checkpointed size
		}
		r.streamHandle(depth + 1) // RocksDB's meta data
		for range 2 {             // shared state, private state
			for range r.count("incremental state file", 3) {
				r.utf() // local path
				r.streamHandle(depth + 1)
			}
		}
		if t == handleIncrementalKeyGroupsV2 {
			r.utf()
		}
	case handleChangelog, handleChangelogV2:
		r.skip(4 + 4 + 8)
		for range 2 { // materialized, non-materialized
			for range r.count("changelog handle", 1) {
				r.keyedHandle(depth + 1)
			}
		}
		r.skip(8)
		if t == handleChangelogV2 {
			r.skip(8)
		}
		r.utf()
	case handleChangelogByteIncrement:
		r.skip(4 + 4 + 8 + 8)
		for range r.count("state change", 8) {
			r.skip(4)
			n := r.i32()
			r.inline += int64(n)
			r.skip(int(n))
		}
		r.utf()
	case handleChangelogFileIncrement, handleChangelogFileIncrementV2:
		r.skip(4 + 4)
		for range r.count("changelog file", 9) {
			r.skip(8) // offset
			r.streamHandle(depth + 1)
		}
		r.skip(8 + 8)
		r.utf()
		if t == handleChangelogFileIncrementV2 {
			r.utf() // storage identifier
		}
	default:
		r.fail("unknown keyed state handle type %d", t)
	}
}

func (r *metaReader) streamHandle(depth int) {
	if depth > maxHandleDepth {
		r.fail("state handles nested deeper than %d", maxHandleDepth)
		return
	}
	switch t := r.u8(); t {
	case handleNull, handleEmptySegmentFile:
	case handleFileStream:
		size := r.i64()
		r.addFile(r.utf(), size)
	case handleByteStream:
		r.utf() // handle name
		n := r.i32()
		if r.err == nil && n < 0 {
			r.fail("inline state of %d bytes", n)
		}
		r.inline += int64(n)
		r.skip(int(n))
	case handleRelativeStream:
		rel := r.utf()
		size := r.i64()
		if r.err == nil && (rel == "" || strings.Contains(rel, "/")) {
			// Flink writes the file's name only (the exclusive directory is the
			// checkpoint's own).
			r.fail("relative state handle %q is not a file name", rel)
		}
		r.addFile(r.dir+"/"+rel, size)
	case handleKeyGroups:
		r.keyGroupOffsets()
		r.streamHandle(depth + 1)
	case handleSegmentFile:
		r.skip(8 + 8 + 4) // start position, size, scope
		p := r.utf()
		r.utf() // logical file id
		r.addFile(p, unknownSize)
	default:
		r.fail("unknown stream state handle type %d", t)
	}
}

// readAllLimited reads at most limit bytes of rd; more is an error.
func readAllLimited(rd io.Reader, limit int64, what string) ([]byte, error) {
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(rd, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	if n > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", what, limit)
	}
	return buf.Bytes(), nil
}
