// Package all registers every importer parscope ships with; import it for
// its side effect.
package all

import (
	_ "github.com/parscope/parscope/format/annotated"
	_ "github.com/parscope/parscope/format/bbv"
	_ "github.com/parscope/parscope/format/chrome"
	_ "github.com/parscope/parscope/format/dumpi"
	_ "github.com/parscope/parscope/format/gomez"
	_ "github.com/parscope/parscope/format/gotrace"
	_ "github.com/parscope/parscope/format/otf2"
	_ "github.com/parscope/parscope/format/prv"
)
