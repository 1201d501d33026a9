package trace

import (
	"slices"
	"strconv"

	"github.com/parscope/parscope/internal/jsontext"
)

// AppendJSON appends h encoded as JSON to dst and returns the extended
// buffer. The bytes are those encoding/json.Marshal gives for h: the same
// field names and order, the same omitted fields, map keys sorted, strings
// escaped alike (HTML characters, control characters, invalid UTF-8,
// U+2028 and U+2029). It is written without reflection for the recorder,
// which writes its header in the first milliseconds of the program it
// records: there the first encoding/json.Marshal of a Header, which builds
// its encoders by reflection, took about 0.7 ms of a hello-world's 10.
func (h *Header) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"meta":`...)
	dst = h.Meta.appendJSON(dst)
	dst = append(dst, `,"runs":`...)
	dst = appendList(dst, h.Runs, false, (*RunInfo).appendJSON)
	dst = appendListField(dst, `,"states":`, h.States, (*StateDef).appendJSON)
	dst = appendListField(dst, `,"regions":`, h.Regions, (*RegionDef).appendJSON)
	dst = appendListField(dst, `,"events":`, h.Events, (*EventDef).appendJSON)
	dst = appendListField(dst, `,"counters":`, h.Counters, (*CounterDef).appendJSON)
	dst = appendListField(dst, `,"comms":`, h.Comms, (*CommDef).appendJSON)
	dst = appendListField(dst, `,"procs":`, h.Procs, (*ProcInfo).appendJSON)
	if len(h.Repairs) > 0 {
		dst = append(dst, `,"repairs":`...)
		dst = appendMap(dst, h.Repairs, strconv.AppendInt)
	}
	return append(dst, '}')
}

func (m *Meta) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"clock_resolution_ns":`...)
	dst = strconv.AppendInt(dst, m.ClockResolution, 10)
	dst = appendStringField(dst, `,"source":`, m.Source)
	if len(m.Inputs) > 0 {
		dst = append(dst, `,"inputs":`...)
		dst = appendStrings(dst, m.Inputs)
	}
	dst = appendStringField(dst, `,"program":`, m.Program)
	if len(m.CommandLine) > 0 {
		dst = append(dst, `,"command_line":`...)
		dst = appendStrings(dst, m.CommandLine)
	}
	dst = appendStringField(dst, `,"host":`, m.Host)
	dst = appendExtra(dst, m.Extra)
	return append(dst, '}')
}

func (r *RunInfo) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendInt(dst, int64(r.ID), 10)
	dst = appendStringField(dst, `,"name":`, r.Name)
	dst = append(dst, `,"procs":`...)
	dst = strconv.AppendInt(dst, int64(r.Procs), 10)
	dst = appendExtra(dst, r.Extra)
	return append(dst, '}')
}

func (p *ProcInfo) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"run":`...)
	dst = strconv.AppendInt(dst, int64(p.Run), 10)
	dst = append(dst, `,"proc":`...)
	dst = strconv.AppendInt(dst, int64(p.Proc), 10)
	dst = appendStringField(dst, `,"name":`, p.Name)
	dst = appendExtra(dst, p.Extra)
	return append(dst, '}')
}

func (s *StateDef) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendInt(dst, int64(s.ID), 10)
	dst = appendStringField(dst, `,"name":`, s.Name)
	dst = appendStringField(dst, `,"description":`, s.Description)
	dst = appendStringField(dst, `,"file":`, s.File)
	dst = appendIntField(dst, `,"line":`, s.Line)
	if s.Absent {
		dst = append(dst, `,"absent":true`...)
	}
	return append(dst, '}')
}

func (r *RegionDef) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendInt(dst, int64(r.ID), 10)
	dst = append(dst, `,"kind":`...)
	dst = strconv.AppendUint(dst, uint64(r.Kind), 10)
	dst = append(dst, `,"label":`...)
	dst = appendJSONString(dst, r.Label)
	dst = appendStringField(dst, `,"function":`, r.Function)
	dst = appendStringField(dst, `,"file":`, r.File)
	dst = appendIntField(dst, `,"line":`, r.Line)
	dst = appendIntField(dst, `,"end_line":`, r.EndLine)
	dst = append(dst, `,"parent":`...)
	dst = strconv.AppendInt(dst, int64(r.Parent), 10)
	return append(dst, '}')
}

func (e *EventDef) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendInt(dst, int64(e.ID), 10)
	dst = append(dst, `,"name":`...)
	dst = appendJSONString(dst, e.Name)
	return append(dst, '}')
}

func (c *CounterDef) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendInt(dst, int64(c.ID), 10)
	dst = append(dst, `,"name":`...)
	dst = appendJSONString(dst, c.Name)
	dst = appendStringField(dst, `,"unit":`, c.Unit)
	return append(dst, '}')
}

func (c *CommDef) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendInt(dst, int64(c.ID), 10)
	dst = appendStringField(dst, `,"name":`, c.Name)
	if len(c.Members) > 0 {
		dst = append(dst, `,"members":[`...)
		for i, m := range c.Members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, int64(m), 10)
		}
		dst = append(dst, ']')
	}
	if c.Self {
		dst = append(dst, `,"self":true`...)
	}
	if c.Unknown {
		dst = append(dst, `,"unknown":true`...)
	}
	return append(dst, '}')
}

// appendList appends a JSON array of xs, each by enc; a nil slice is null
// (as encoding/json writes a slice field without omitempty), an empty one
// []. omitted says the caller already left out an empty slice.
func appendList[T any](dst []byte, xs []T, omitted bool, enc func(*T, []byte) []byte) []byte {
	if xs == nil && !omitted {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i := range xs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = enc(&xs[i], dst)
	}
	return append(dst, ']')
}

// appendListField appends a slice field with omitempty: name is the
// comma, the quoted name and the colon.
func appendListField[T any](dst []byte, name string, xs []T, enc func(*T, []byte) []byte) []byte {
	if len(xs) == 0 {
		return dst
	}
	return appendList(append(dst, name...), xs, true, enc)
}

func appendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, s)
	}
	return append(dst, ']')
}

// appendExtra appends an "extra" field with omitempty.
func appendExtra(dst []byte, m map[string]string) []byte {
	if len(m) == 0 {
		return dst
	}
	dst = append(dst, `,"extra":`...)
	return appendMap(dst, m, func(dst []byte, v string, _ int) []byte { return appendJSONString(dst, v) })
}

// appendMap appends m as a JSON object with its keys in sorted order, as
// encoding/json writes a map; enc appends a value (its last argument is
// strconv.AppendInt's base, 10).
func appendMap[V any](dst []byte, m map[string]V, enc func([]byte, V, int) []byte) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		dst = enc(dst, m[k], 10)
	}
	return append(dst, '}')
}

// appendStringField appends a string field with omitempty: name is the
// comma, the quoted name and the colon.
func appendStringField(dst []byte, name, s string) []byte {
	if s == "" {
		return dst
	}
	return appendJSONString(append(dst, name...), s)
}

// appendIntField appends an integer field with omitempty.
func appendIntField(dst []byte, name string, v int32) []byte {
	if v == 0 {
		return dst
	}
	return strconv.AppendInt(append(dst, name...), int64(v), 10)
}

// appendJSONString appends s as json.Marshal writes a string (with its
// HTML escaping).
func appendJSONString(dst []byte, s string) []byte { return jsontext.AppendString(dst, s, true) }
