package mpi

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestDetectImpl(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	script("mpirun.mpich", "true")
	orterun := script("orterun", "true")
	if err := os.Symlink(orterun, filepath.Join(dir, "mpiexec")); err != nil {
		t.Fatal(err)
	}
	script("launch-a", "echo 'HYDRA build details:'")
	script("launch-b", "echo 'mpirun (Open MPI) 4.1.4'")
	script("launch-c", "echo something else")
	for name, want := range map[string]string{"mpirun.mpich": "mpich", "mpiexec": "openmpi", "launch-a": "mpich",
		"launch-b": "openmpi", "launch-c": "", "no-such-launcher": ""} {
		if got := DetectImpl(context.Background(), filepath.Join(dir, name)); got.Name != want {
			t.Errorf("%s: %q, want %q", name, got.Name, want)
		}
	}
	if got := DetectImpl(context.Background(), filepath.Join(dir, "mpirun.mpich")); got.MPICC == "" {
		t.Error("no compiler for mpich")
	}
}

func TestLaunchEnv(t *testing.T) {
	env := []string{"PATH=/bin", "LD_PRELOAD=/other.so", "PARSCOPE_MPI_DIR=/old", "HOME=/root"}
	got := LaunchEnv(env, Impl{Name: "mpich"}, "/shim.so", "/raw", 4096)
	want := []string{"PATH=/bin", "HOME=/root", "LD_PRELOAD=/shim.so:/other.so", "PARSCOPE_MPI_DIR=/raw", "PARSCOPE_MPI_BUFFER=4096"}
	if !slices.Equal(got, want) {
		t.Errorf("mpich env %q, want %q", got, want)
	}
	got = LaunchEnv([]string{"PATH=/bin"}, Impl{Name: "openmpi"}, "/shim.so", "/raw", 0)
	want = []string{"PATH=/bin", "LD_PRELOAD=/shim.so", "PARSCOPE_MPI_DIR=/raw", "OMPI_ALLOW_RUN_AS_ROOT=1",
		"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_rmaps_base_oversubscribe=1"}
	if !slices.Equal(got, want) {
		t.Errorf("openmpi env %q, want %q", got, want)
	}
	argv := []string{"mpirun", "-np", "4", "./a"}
	if got := LaunchArgs(argv, Impl{Name: "mpich"}, 0); !slices.Equal(got, argv) {
		t.Errorf("mpich args %q", got)
	}
	if got, want := LaunchArgs(argv, Impl{Name: "openmpi"}, 256), []string{"mpirun", "-x", "LD_PRELOAD", "-x",
		"PARSCOPE_MPI_DIR", "-x", "PARSCOPE_MPI_BUFFER", "-np", "4", "./a"}; !slices.Equal(got, want) {
		t.Errorf("openmpi args %q, want %q", got, want)
	}
}

func TestBuildErrors(t *testing.T) {
	if _, err := Build(context.Background(), BuildOptions{}); err == nil {
		t.Error("no compiler accepted")
	}
	if _, err := Build(context.Background(), BuildOptions{MPICC: "no-such-mpicc-here", CacheDir: t.TempDir()}); err == nil {
		t.Error("a missing compiler accepted")
	}
	// A C compiler that is not an MPI wrapper is refused by name.
	fake := filepath.Join(t.TempDir(), "cc")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(context.Background(), BuildOptions{MPICC: fake, CacheDir: t.TempDir()}); err == nil {
		t.Error("a non-MPI compiler accepted")
	}
}
