package mpi

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"io"
	"path/filepath"
	"sort"
	"strconv"
)

// Site is a resolved call site.
type Site struct {
	Function string `json:"function,omitempty"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	// Object is the executable or library the address is in.
	Object string `json:"object,omitempty"`
}

// String formats the site as "function file:line" with the file's base
// name, or what is known of it.
func (s Site) String() string {
	out := s.Function
	if s.File != "" {
		if out != "" {
			out += " "
		}
		out += filepath.Base(s.File) + ":" + strconv.Itoa(s.Line)
	}
	if out == "" && s.Object != "" {
		out = filepath.Base(s.Object)
	}
	if out == "" {
		out = "?"
	}
	return out
}

// Resolver turns return addresses into source positions with the DWARF
// line tables and subprograms of the mapped objects (ELF symbols when an
// object has no DWARF). Objects are opened once; a missing or unreadable
// object leaves its addresses unresolved.
type Resolver struct {
	objects map[string]*object
}

// NewResolver returns an empty Resolver.
func NewResolver() *Resolver { return &Resolver{objects: map[string]*object{}} }

type lineRow struct {
	addr uint64
	file string
	line int
}

type funcRange struct {
	lo, hi uint64
	name   string
}

type object struct {
	err   error
	loads []elf.ProgHeader
	lines []lineRow   // sorted by addr; an end_sequence row has line 0
	funcs []funcRange // sorted by lo
}

// Resolve returns the site of return address pc in a process with the
// given mappings; ok is false when no mapping holds pc.
func (r *Resolver) Resolve(maps []Mapping, pc uint64) (Site, bool) {
	for _, m := range maps {
		if pc < m.Start || pc >= m.End {
			continue
		}
		s := Site{Object: m.Path}
		o := r.open(m.Path)
		if o.err != nil {
			return s, true
		}
		// The file offset of pc, then its link-time address by the PT_LOAD
		// segment holding that offset. pc is a return address: look up the
		// call instruction before it.
		off := pc - m.Start + m.Offset
		var vaddr uint64
		found := false
		for _, p := range o.loads {
			if off >= p.Off && off < p.Off+p.Filesz {
				vaddr, found = off-p.Off+p.Vaddr, true
				break
			}
		}
		if !found || vaddr == 0 {
			return s, true
		}
		vaddr--
		if i := sort.Search(len(o.lines), func(i int) bool { return o.lines[i].addr > vaddr }); i > 0 {
			if row := o.lines[i-1]; row.line > 0 {
				s.File, s.Line = row.file, row.line
			}
		}
		if i := sort.Search(len(o.funcs), func(i int) bool { return o.funcs[i].lo > vaddr }); i > 0 {
			// the innermost of the ranges starting before vaddr that hold it
			for j := i - 1; j >= 0 && j >= i-64; j-- {
				if f := o.funcs[j]; vaddr < f.hi {
					s.Function = f.name
					break
				}
			}
		}
		return s, true
	}
	return Site{}, false
}

func (r *Resolver) open(path string) *object {
	if o, ok := r.objects[path]; ok {
		return o
	}
	o := &object{}
	r.objects[path] = o
	f, err := elf.Open(path)
	if err != nil {
		o.err = err
		return o
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			o.loads = append(o.loads, p.ProgHeader)
		}
	}
	if d, err := f.DWARF(); err == nil {
		o.readDWARF(d)
	}
	if len(o.funcs) == 0 {
		syms, _ := f.Symbols()
		if len(syms) == 0 {
			syms, _ = f.DynamicSymbols()
		}
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
				hi := s.Value + s.Size
				if s.Size == 0 {
					hi = s.Value + 1
				}
				o.funcs = append(o.funcs, funcRange{s.Value, hi, s.Name})
			}
		}
	}
	sort.SliceStable(o.lines, func(i, j int) bool { return o.lines[i].addr < o.lines[j].addr })
	sort.SliceStable(o.funcs, func(i, j int) bool { return o.funcs[i].lo < o.funcs[j].lo })
	return o
}

func (o *object) readDWARF(d *dwarf.Data) {
	rd := d.Reader()
	for {
		e, err := rd.Next()
		if err != nil || e == nil {
			return
		}
		switch e.Tag {
		case dwarf.TagCompileUnit:
			if lr, err := d.LineReader(e); err == nil && lr != nil {
				var le dwarf.LineEntry
				for {
					if err := lr.Next(&le); err != nil {
						if !errors.Is(err, io.EOF) {
							break
						}
						break
					}
					row := lineRow{addr: le.Address, line: le.Line}
					if le.File != nil {
						row.file = le.File.Name
					}
					if le.EndSequence {
						row.line = 0
					}
					o.lines = append(o.lines, row)
				}
			}
		case dwarf.TagSubprogram:
			name, _ := e.Val(dwarf.AttrName).(string)
			if name == "" {
				continue
			}
			ranges, err := d.Ranges(e)
			if err != nil {
				continue
			}
			for _, rg := range ranges {
				o.funcs = append(o.funcs, funcRange{rg[0], rg[1], name})
			}
		}
	}
}
