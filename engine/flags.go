package engine

import (
	"fmt"
	"reflect"

	"github.com/spf13/pflag"
)

// BindFlags defines a flag on fs for every field of the options struct
// opts points to that has a `flag:"NAME"` tag, with the field's `help`
// tag as its usage and the field's current value as its default; parsing
// fs then sets the fields. Every face binds the same struct, so the flag
// names and defaults are the same in `parscope` and `parscope-beam`.
// Fields may be string, bool, int, int64, float64 or []string.
func BindFlags(fs *pflag.FlagSet, opts any) error {
	v := reflect.ValueOf(opts)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("engine: BindFlags of %T, want a pointer to a struct", opts)
	}
	v = v.Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
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
		default:
			return fmt.Errorf("engine: flag %q: field %s of type %s cannot be a flag", name, f.Name, f.Type)
		}
	}
	return nil
}
