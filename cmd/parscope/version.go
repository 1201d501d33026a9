package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// versionInfo is what parscope version prints: the module version (a tag
// when installed with go install, "(devel)" when built from a clone), the
// commit it was built from and whether the work tree had changes, and the
// Go toolchain.
type versionInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Time     string `json:"commit_time,omitempty"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
}

// buildVersion reads the version from the build information the Go
// toolchain embeds in the binary.
func buildVersion() versionInfo { return versionFrom(debug.ReadBuildInfo()) }

// versionFrom reads the version from build information bi (ok is false
// when the binary has none).
func versionFrom(bi *debug.BuildInfo, ok bool) versionInfo {
	v := versionInfo{Version: "(devel)", Go: runtime.Version()}
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// versionText is the one-line form of this binary's version.
func versionText() string { return buildVersion().String() }

// String is the one-line form: "v1.2.0 go1.26.0" when installed with go
// install, "(devel) (commit 0123abcd, modified) go1.26.0" from a clone.
func (v versionInfo) String() string {
	s := v.Version
	if v.Commit != "" {
		s += " (commit " + v.Commit
		if v.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return s + " " + v.Go
}

func init() {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version parscope was built with",
		Long: `version prints the module version (the tag when installed with
go install github.com/parscope/parscope/cmd/parscope@VERSION, "(devel)" when
built from a clone), the commit it was built from (with ", modified" when the
work tree had uncommitted changes) and the Go version. parscope --version
prints the same line.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), buildVersion())
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "parscope "+versionText())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the version as JSON")
	root.AddCommand(cmd)
}
