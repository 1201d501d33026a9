package instrument

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/parscope/parscope/trace"
)

// FilterStatsKey prefixes the metadata keys (trace.Meta.Extra) in which a
// recorder with a Filter or a Throttle reports what it dropped: the key
// FilterStatsKey holds the totals, and FilterStatsKey+".state.ID" and
// FilterStatsKey+".region.ID" (ID zero-padded to 6 digits, so that the
// keys sort by id) one state or region with drops: its name, the records
// kept and dropped, and why. `parscope info` lists them.
const FilterStatsKey = "parscope.filtered"

// why a record was kept or dropped.
type dropWhy uint8

const (
	kept dropWhy = iota
	dropFiltered
	dropThrottled
	nWhy
)

// maxTallyID bounds the ids tallied (a larger id is not counted, so a
// stray id cannot make a process allocate much).
const maxTallyID = 1 << 20

// tally counts, per state and per region (its enters), the records a
// process kept and dropped. It belongs to the process's goroutine.
type tally struct {
	states, regions [][nWhy]int64
}

func (t *tally) slot(k trace.Kind, id int32) *[nWhy]int64 {
	var s *[][nWhy]int64
	switch k {
	case trace.KindState:
		s = &t.states
	case trace.KindEnter:
		s = &t.regions
	default:
		return nil
	}
	if id < 0 || id >= maxTallyID {
		return nil
	}
	if int(id) >= len(*s) {
		*s = append(*s, make([][nWhy]int64, int(id)+1-len(*s))...)
	}
	return &(*s)[id]
}

// count counts one record of kind k and id; a nil tally counts nothing.
func (t *tally) count(k trace.Kind, id int32, why dropWhy) {
	if t == nil {
		return
	}
	if c := t.slot(k, id); c != nil {
		c[why]++
	}
}

// addFilterStats sums the processes' tallies into extra (see
// FilterStatsKey). The processes have finished recording.
func (r *Recorder) addFilterStats(extra map[string]string) {
	if r.opts.Filter == nil && r.opts.Throttle <= 0 {
		return
	}
	var states, regions [][nWhy]int64
	add := func(dst *[][nWhy]int64, src [][nWhy]int64) {
		if len(src) > len(*dst) {
			*dst = append(*dst, make([][nWhy]int64, len(src)-len(*dst))...)
		}
		for i, c := range src {
			for w := range c {
				(*dst)[i][w] += c[w]
			}
		}
	}
	for _, p := range r.sortedProcs() {
		if p.tally != nil {
			add(&states, p.tally.states)
			add(&regions, p.tally.regions)
		}
	}
	var total [nWhy]int64
	report := func(what string, counts [][nWhy]int64, name func(int32) string) {
		for id, c := range counts {
			for w := range c {
				total[w] += c[w]
			}
			if c[dropFiltered]+c[dropThrottled] == 0 {
				continue
			}
			var why string
			switch {
			case c[dropThrottled] > 0 && c[dropFiltered] > 0:
				why = fmt.Sprintf("throttled after %d calls (%d), filter (%d)", r.opts.Throttle, c[dropThrottled], c[dropFiltered])
			case c[dropThrottled] > 0:
				why = fmt.Sprintf("throttled after %d calls", r.opts.Throttle)
			default:
				why = "filter"
			}
			extra[fmt.Sprintf("%s.%s.%06d", FilterStatsKey, what, id)] = fmt.Sprintf("%s: kept %d, dropped %d: %s",
				name(int32(id)), c[kept], c[dropFiltered]+c[dropThrottled], why)
		}
	}
	report("state", states, func(id int32) string { return defName(r.opts.States, id) })
	report("region", regions, func(id int32) string {
		for _, d := range r.opts.Regions {
			if d.ID == id {
				return d.Label
			}
		}
		return fmt.Sprint(id)
	})
	extra[FilterStatsKey] = fmt.Sprintf("blocks and region enters kept %d, dropped %d (filter %d, throttle %d after %d calls)",
		total[kept], total[dropFiltered]+total[dropThrottled], total[dropFiltered], total[dropThrottled], r.opts.Throttle)
}

// DroppedStates reads back what the recorder reported under
// FilterStatsKey in extra (a trace's metadata): the records dropped of
// each state, by state id. A key it wrote that does not parse is an error
// naming it.
func DroppedStates(extra map[string]string) (map[int32]int64, error) {
	out := map[int32]int64{}
	prefix := FilterStatsKey + ".state."
	for k, v := range extra {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		id, err := strconv.ParseInt(rest, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("metadata %s: expected a state id after %s", k, prefix)
		}
		// "NAME: kept K, dropped D: WHY"; the name may hold ": kept ".
		i := strings.LastIndex(v, ": kept ")
		var kept, dropped int64
		if i < 0 {
			return nil, fmt.Errorf("metadata %s: %q: expected \"NAME: kept K, dropped D: WHY\"", k, v)
		}
		if _, err := fmt.Sscanf(v[i:], ": kept %d, dropped %d:", &kept, &dropped); err != nil {
			return nil, fmt.Errorf("metadata %s: %q: expected \"NAME: kept K, dropped D: WHY\"", k, v)
		}
		out[int32(id)] += dropped
	}
	return out, nil
}

// defName is a state's description, else its name, else its id.
func defName(defs []trace.StateDef, id int32) string {
	for _, d := range defs {
		if d.ID == id {
			if d.Description != "" {
				return d.Description
			}
			return stateName(defs, id)
		}
	}
	return fmt.Sprint(id)
}
