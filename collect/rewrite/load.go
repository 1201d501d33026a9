package rewrite

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
)

// newImporter returns an importer reading the compiler's export data of
// the files' imports and their dependencies, found with `go list -export`
// run in dir (so that dir's module, if any, resolves them).
func newImporter(ctx context.Context, fset *token.FileSet, dir string, files []*ast.File) (types.Importer, error) {
	set := map[string]bool{}
	for _, f := range files {
		for _, imp := range f.Imports {
			if p, err := strconv.Unquote(imp.Path.Value); err == nil && p != "C" && p != "unsafe" {
				set[p] = true
			}
		}
	}
	exports := map[string]string{}
	if len(set) > 0 {
		paths := make([]string, 0, len(set))
		for p := range set {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		args := append([]string{"list", "-e", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}, paths...)
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("%s: go list of the imports: %w: %s", dir, err, strings.TrimSpace(stderr.String()))
		}
		for _, line := range strings.Split(string(out), "\n") {
			if path, file, ok := strings.Cut(line, "\t"); ok && file != "" {
				exports[path] = file
			}
		}
	}
	lookup := func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %q (is it importable from %s?)", path, dir)
		}
		return os.Open(file)
	}
	return importer.ForCompiler(fset, "gc", lookup), nil
}
