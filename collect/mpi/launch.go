package mpi

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Impl is an MPI implementation: its launcher's flavour and the compiler
// wrapper that builds a shim for it.
type Impl struct {
	// Name is "mpich", "openmpi" or "" (unknown).
	Name string
	// MPICC is the compiler wrapper of the implementation.
	MPICC string
}

// DetectImpl guesses the MPI implementation of a launch command (its first
// word: mpirun, mpiexec, mpirun.mpich, mpirun.openmpi, a path) from the
// launcher's name after following symbolic links (Debian's alternatives),
// then from what `--version` prints. It returns an Impl with Name "" when
// neither tells.
func DetectImpl(ctx context.Context, launcher string) Impl {
	path, err := exec.LookPath(launcher)
	if err != nil {
		return Impl{}
	}
	names := []string{filepath.Base(path)}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		names = append(names, filepath.Base(real))
	}
	for _, n := range names {
		switch {
		case strings.Contains(n, "mpich") || strings.Contains(n, "hydra"):
			return implNamed("mpich")
		case strings.Contains(n, "openmpi") || strings.Contains(n, "orterun") || strings.Contains(n, "prterun"):
			return implNamed("openmpi")
		}
	}
	out, _ := exec.CommandContext(ctx, path, "--version").CombinedOutput()
	switch s := string(out); {
	case strings.Contains(s, "HYDRA") || strings.Contains(s, "MPICH"):
		return implNamed("mpich")
	case strings.Contains(s, "Open MPI") || strings.Contains(s, "OpenRTE"):
		return implNamed("openmpi")
	}
	return Impl{}
}

func implNamed(name string) Impl {
	cc := "mpicc." + name
	if _, err := exec.LookPath(cc); err != nil {
		cc = "mpicc"
	}
	return Impl{Name: name, MPICC: cc}
}

// LaunchEnv returns env (os.Environ() form) with what the shim needs:
// LD_PRELOAD with lib first, PARSCOPE_MPI_DIR=dir, and PARSCOPE_MPI_BUFFER
// when buffer > 0. For Open MPI it also allows running as root and
// oversubscribing (the OMPI_* variables equivalent to --allow-run-as-root
// --oversubscribe), as the machines parscope is tested on need.
func LaunchEnv(env []string, impl Impl, lib, dir string, buffer int64) []string {
	set := map[string]string{"PARSCOPE_MPI_DIR": dir}
	preload := lib
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "LD_PRELOAD="); ok && v != "" {
			preload = lib + ":" + v
		}
	}
	set["LD_PRELOAD"] = preload
	if buffer > 0 {
		set["PARSCOPE_MPI_BUFFER"] = strconv.FormatInt(buffer, 10)
	}
	if impl.Name == "openmpi" {
		set["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
		set["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
		set["OMPI_MCA_rmaps_base_oversubscribe"] = "1"
	}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			out = append(out, kv)
		}
	}
	for _, k := range []string{"LD_PRELOAD", "PARSCOPE_MPI_DIR", "PARSCOPE_MPI_BUFFER", "OMPI_ALLOW_RUN_AS_ROOT",
		"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "OMPI_MCA_rmaps_base_oversubscribe"} {
		if v, ok := set[k]; ok {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// LaunchArgs returns the launch command with what Open MPI needs to pass
// the shim's variables to its ranks (-x NAME after the launcher); other
// commands are returned as they are. buffer is LaunchEnv's.
func LaunchArgs(argv []string, impl Impl, buffer int64) []string {
	if impl.Name != "openmpi" || len(argv) == 0 {
		return argv
	}
	out := []string{argv[0], "-x", "LD_PRELOAD", "-x", "PARSCOPE_MPI_DIR"}
	if buffer > 0 {
		out = append(out, "-x", "PARSCOPE_MPI_BUFFER")
	}
	return append(out, argv[1:]...)
}
