package engine

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// BindFlags defines a flag on fs for every field of the options struct
// opts points to that has a `flag:"NAME"` tag, with the field's `help`
// tag as its usage and the field's current value as its default; parsing
// fs then sets the fields. Every face binds the same struct, so the flag
// names and defaults are the same in `parscope` and `parscope-beam`.
// Fields may be string, bool, int, int64, float64, []string, []float64
// (comma-separated), []int32 (a list of numbers and ranges: 4,5,6 or 1-3)
// or time.Duration (a Go
// duration such as 1ms, or a number of nanoseconds); the fields of an
// embedded struct are bound as the struct's own.
func BindFlags(fs *pflag.FlagSet, opts any) error {
	v := reflect.ValueOf(opts)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("engine: BindFlags of %T, want a pointer to a struct", opts)
	}
	v = v.Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if err := BindFlags(fs, v.Field(i).Addr().Interface()); err != nil {
				return err
			}
			continue
		}
		name := f.Tag.Get("flag")
		if name == "" {
			continue
		}
		help := f.Tag.Get("help")
		switch p := v.Field(i).Addr().Interface().(type) {
		case *string:
			fs.StringVar(p, name, *p, help)
		case *bool:
			fs.BoolVar(p, name, *p, help)
		case *int:
			fs.IntVar(p, name, *p, help)
		case *int64:
			fs.Int64Var(p, name, *p, help)
		case *float64:
			fs.Float64Var(p, name, *p, help)
		case *[]string:
			fs.StringSliceVar(p, name, *p, help)
		case *[]float64:
			fs.Float64SliceVar(p, name, *p, help)
		case *[]int32:
			fs.Var((*idList)(p), name, help)
		case *time.Duration:
			fs.Var((*duration)(p), name, help)
		default:
			return fmt.Errorf("engine: flag %q: field %s of type %s cannot be a flag", name, f.Name, f.Type)
		}
	}
	return nil
}

// idList is a []int32 flag: numbers and ranges lo-hi, comma-separated.
type idList []int32

func (l *idList) String() string {
	parts := make([]string, len(*l))
	for i, v := range *l {
		parts[i] = strconv.Itoa(int(v))
	}
	return strings.Join(parts, ",")
}

func (l *idList) Type() string { return "ids" }

func (l *idList) Set(s string) error {
	ids, err := ParseIDs(s)
	if err != nil {
		return err
	}
	*l = ids
	return nil
}

// MaxIDRange bounds the numbers one range of ParseIDs spans.
const MaxIDRange = 1 << 20

// ParseIDs parses a list of non-negative numbers and ranges lo-hi,
// comma-separated ("4,5,6", "0,2-3"); an empty string is nil.
func ParseIDs(s string) ([]int32, error) { return ParseIDsAtMost(s, -1) }

// ParseIDsAtMost is ParseIDs that refuses a list of more than most
// numbers (counting repeats) before making it; most < 0 is no bound. A
// server parsing a list from a request bounds it so: a short text of
// large ranges would otherwise expand to gigabytes.
func ParseIDsAtMost(s string, most int) ([]int32, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int32
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseInt(lo, 10, 32)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("%q is not a non-negative number or range", part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseInt(hi, 10, 32); err != nil || b < a {
				return nil, fmt.Errorf("%q is not a range lo-hi", part)
			}
		}
		if b-a > MaxIDRange {
			return nil, fmt.Errorf("range %q is too large", part)
		}
		if most >= 0 && int64(len(out))+b-a+1 > int64(most) {
			return nil, fmt.Errorf("%q: more than %d numbers in the list", part, most)
		}
		for v := a; v <= b; v++ {
			out = append(out, int32(v))
		}
	}
	return out, nil
}

// duration is a time.Duration flag that also takes a bare number of
// nanoseconds.
type duration time.Duration

func (d *duration) String() string { return time.Duration(*d).String() }

func (d *duration) Type() string { return "duration" }

func (d *duration) Set(s string) error {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		*d = duration(n)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is neither a duration (1ms, 250us) nor nanoseconds", s)
	}
	*d = duration(v)
	return nil
}
