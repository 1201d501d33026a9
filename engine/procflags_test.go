package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/parscope/parscope/engine"
)

// TestProcFlags checks the selection flags every face binds: --procs
// only when the options do not bind it, --states-from only for an
// analysis that reads states, and their values in the request.
func TestProcFlags(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	f := engine.BindProcFlags(fs, "test-count")
	for _, name := range []string{"procs", "exclude-procs", "states-from"} {
		if fs.Lookup(name) == nil {
			t.Errorf("no --%s", name)
		}
	}
	if err := fs.Parse([]string{"--procs", "0-2", "--exclude-procs", "1", "--states-from", "mpi"}); err != nil {
		t.Fatal(err)
	}
	var req engine.Request
	if err := f.Apply(&req); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(req.Procs, []int32{0, 1, 2}) || !slices.Equal(req.ExcludeProcs, []int32{1}) || req.States != engine.StatesMPI {
		t.Errorf("request %+v", req)
	}

	fs = pflag.NewFlagSet("y", pflag.ContinueOnError)
	fs.Var(new(idsValue), "procs", "the analysis' own")
	f = engine.BindProcFlags(fs, "test-bbv")
	if fs.Lookup("states-from") != nil {
		t.Error("--states-from for an analysis that reads no states")
	}
	if err := fs.Parse([]string{"--procs", "3", "--exclude-procs", "x"}); err != nil {
		t.Fatal(err)
	}
	req = engine.Request{}
	if err := f.Apply(&req); err == nil || !strings.HasPrefix(err.Error(), "--exclude-procs: ") || req.Procs != nil {
		t.Errorf("a bad --exclude-procs: %v, request %+v", err, req)
	}
}

// idsValue is a flag the options of an analysis bind.
type idsValue []int32

func (v *idsValue) String() string   { return "" }
func (v *idsValue) Type() string     { return "ids" }
func (v *idsValue) Set(string) error { return nil }
