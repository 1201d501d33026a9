package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/parscope/parscope/analysis/mentropy"
	"github.com/parscope/parscope/analysis/phase"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/engine/beam/pipelines"
)

// TestFlagsAreTheCLIs checks that every analysis takes its options under
// the flags, help and defaults parscope gives them (engine.BindFlags on
// the options struct), with --runs and the selection flags of every face
// (engine.BindProcFlags), beside the pipeline's own.
func TestFlagsAreTheCLIs(t *testing.T) {
	for _, name := range pipelines.Analyses {
		a, _ := engine.Lookup(name)
		want := pflag.NewFlagSet("parscope "+name, pflag.ContinueOnError)
		if err := engine.BindFlags(want, a.Options()); err != nil {
			t.Fatal(err)
		}
		engine.BindProcFlags(want, name)
		want.String("runs", "", "")
		var help bytes.Buffer
		_, _, err := parse(name, []string{"--help"}, &help)
		if !errors.Is(err, pflag.ErrHelp) {
			t.Fatalf("%s --help: %v", name, err)
		}
		want.VisitAll(func(f *pflag.Flag) {
			if !strings.Contains(help.String(), "--"+f.Name+" ") {
				t.Errorf("%s: --help does not list --%s", name, f.Name)
			}
			if f.Usage != "" && !strings.Contains(help.String(), f.Usage[:min(len(f.Usage), 40)]) {
				t.Errorf("%s --%s: help %q not shown", name, f.Name, f.Usage)
			}
		})
		for _, own := range []string{"--input", "--output", "--runner", "--shards", "--connect-timeout"} {
			if !strings.Contains(help.String(), own) {
				t.Errorf("%s: --help does not list %s", name, own)
			}
		}
		if strings.Contains(help.String(), "--sdk_container_image") {
			t.Errorf("%s: --help lists Beam's flags", name)
		}
	}
}

// TestParse checks that the flags parsed make the pipeline's request:
// the options' JSON, the runs and the selection.
func TestParse(t *testing.T) {
	cfg, rf, err := parse(phase.Name, []string{"--simpoint-compat", "--maxk", "6", "--k", "2,3", "--dim", "noProject", "--vli",
		"--runs", "0-1", "--exclude-procs", "3", "--input", "x.pst", "--output", "o.json", "--runner", "inprocess", "--shards", "4",
		"--environment_type", "LOOPBACK"}, new(bytes.Buffer))
	if err != nil {
		t.Fatal(err)
	}
	req, err := cfg.Request()
	if err != nil {
		t.Fatal(err)
	}
	p := req.Options.(*phase.Params)
	d := phase.DefaultParams()
	if !p.Compat || p.MaxK != 6 || p.K != "2,3" || p.Dim != "noProject" || !p.VLI || p.Seed != d.Seed || p.Coverage != d.Coverage {
		t.Errorf("phases options %+v", p)
	}
	if !slices.Equal(cfg.Runs, []int32{0, 1}) || !slices.Equal(cfg.ExcludeProcs, []int32{3}) || cfg.Procs != nil || cfg.Shards != 4 ||
		rf.runner != "inprocess" || cfg.Input != "x.pst" || cfg.Output != "o.json" {
		t.Errorf("config %+v, runner %q", cfg, rf.runner)
	}

	cfg, _, err = parse(mentropy.Name, []string{"--window-events", "3", "--alpha", "0.5,0.6,0.7,0.8", "--beta=0.4,0.3,0.2,0.1", "--K", "100",
		"--learned", "--of", "states", "--procs", "1-2", "--input", "x.pst", "--output", "o.json"}, new(bytes.Buffer))
	if err != nil {
		t.Fatal(err)
	}
	if req, err = cfg.Request(); err != nil {
		t.Fatal(err)
	}
	m := req.Options.(*mentropy.Params)
	if m.WindowEvents != 3 || !slices.Equal(m.Alpha, []float64{0.5, 0.6, 0.7, 0.8}) || m.Beta[3] != 0.1 || m.K != 100 || !m.Learned ||
		m.Of != "states" || !slices.Equal(m.Procs, []int32{1, 2}) || cfg.Procs != nil {
		t.Errorf("mentropy options %+v, config %+v", m, cfg)
	}
	var opts map[string]any
	if err := json.Unmarshal(cfg.Options, &opts); err != nil || opts["window_events"] != 3.0 {
		t.Errorf("options JSON %s", cfg.Options)
	}

	cfg, _, err = parse("entropy", []string{"--window", "1ms", "--states-from", "mpi", "--procs", "0,2", "--input", "x", "--output", "y"}, new(bytes.Buffer))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cfg.Options), `"window_ns":1000000`) || cfg.States != engine.StatesMPI || cfg.Procs != nil {
		t.Errorf("entropy --window 1ms --states-from mpi: %+v, options %s", cfg, cfg.Options)
	}

	for _, bad := range [][]string{
		{"--alpha", "x", "--input", "x", "--output", "y"},
		{"--runs", "a", "--input", "x", "--output", "y"},
		{"--exclude-procs", "-1", "--input", "x", "--output", "y"},
		{"--input", "x"},
		{"--input", "x", "--output", "y", "extra"},
		{"--maxK", "3", "--input", "x", "--output", "y"},
	} {
		if _, _, err := parse(mentropy.Name, bad, new(bytes.Buffer)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
