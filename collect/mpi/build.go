package mpi

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Sources is the shim's C source (shim/*.c, shim/*.h) and the header
// programs include to mark regions (include/parscope.h), embedded so that
// an installed parscope can build the shim.
//
//go:embed shim/*.c shim/*.h include/parscope.h
var Sources embed.FS

// LibraryName is the file name of the built shim.
const LibraryName = "libparscope-mpi.so"

// BuildOptions locate the compiler and the cache.
type BuildOptions struct {
	// MPICC is the MPI compiler wrapper of the MPI library the program
	// runs with ("mpicc.mpich", "mpicc.openmpi", a path). Required.
	MPICC string
	// CacheDir holds built shims, one directory per source and compiler
	// identity; "" means the user cache directory's parscope/mpi.
	CacheDir string
	// Force rebuilds even when a cached build exists.
	Force bool
}

// DefaultCacheDir returns the user cache directory's parscope/mpi.
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "parscope", "mpi"), nil
}

// Build returns the path of the shim built with opts.MPICC, building it
// into the cache when no build of the same source with the same compiler
// exists. The build goes to a temporary directory renamed into place, so
// concurrent builds and interrupted ones never leave a half-written
// library.
func Build(ctx context.Context, opts BuildOptions) (string, error) {
	if opts.MPICC == "" {
		return "", errors.New("mpi: no MPI compiler (mpicc) given")
	}
	cc, err := exec.LookPath(opts.MPICC)
	if err != nil {
		return "", fmt.Errorf("mpi: the MPI compiler %q is not installed (Debian: apt-get install libmpich-dev or libopenmpi-dev): %w", opts.MPICC, err)
	}
	// Run the wrapper by the name it was found under: Open MPI's
	// mpicc.openmpi is a link to opal_wrapper, which reads its
	// configuration by the name it is called by.
	real := cc
	if r, err := filepath.EvalSymlinks(cc); err == nil {
		real = r
	}
	id, err := compilerIdentity(ctx, cc)
	if err != nil {
		return "", err
	}
	hash := sha256.New()
	fmt.Fprintf(hash, "%s\n%s\n%s\n", cc, real, id)
	err = fs.WalkDir(Sources, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := Sources.ReadFile(p)
		fmt.Fprintf(hash, "%s %d\n", p, len(b))
		hash.Write(b)
		return err
	})
	if err != nil {
		return "", err
	}
	dir := opts.CacheDir
	if dir == "" {
		if dir, err = DefaultCacheDir(); err != nil {
			return "", err
		}
	}
	sum := hex.EncodeToString(hash.Sum(nil))[:16]
	final := filepath.Join(dir, sum)
	lib := filepath.Join(final, LibraryName)
	if _, err := os.Stat(lib); err == nil && !opts.Force {
		return lib, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := os.CopyFS(tmp, Sources); err != nil {
		return "", err
	}
	args := []string{"-shared", "-fPIC", "-O2", "-g", "-Wall", "-o", filepath.Join(tmp, LibraryName),
		filepath.Join(tmp, "shim", "shim.c"), filepath.Join(tmp, "shim", "wrap.c")}
	out, err := exec.CommandContext(ctx, cc, args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("mpi: building the shim with %s %s: %w\n%s", cc, strings.Join(args, " "), err, out)
	}
	if opts.Force {
		os.RemoveAll(final)
	}
	if err := os.Rename(tmp, final); err != nil {
		// Another build won the race: use it.
		if _, serr := os.Stat(lib); serr == nil {
			return lib, nil
		}
		return "", fmt.Errorf("mpi: installing the shim: %w", err)
	}
	return lib, nil
}

// compilerIdentity is what the wrapper compiler says it runs (MPICH's
// -show, Open MPI's --showme), which names the MPI library it links.
func compilerIdentity(ctx context.Context, cc string) (string, error) {
	var errs []string
	for _, flag := range []string{"-show", "--showme"} {
		out, err := exec.CommandContext(ctx, cc, flag).CombinedOutput()
		if err == nil {
			return strings.TrimSpace(string(out)), nil
		}
		errs = append(errs, fmt.Sprintf("%s %s: %v: %s", cc, flag, err, strings.TrimSpace(string(out))))
	}
	return "", fmt.Errorf("mpi: %s is not an MPI compiler wrapper (%s)", cc, strings.Join(errs, "; "))
}
