package callgen

import (
	"os"
	"strings"
	"testing"
)

// TestParseTable checks the real table: every label, the conditional and
// version-bounded arguments where libdumpi has them.
func TestParseTable(t *testing.T) {
	src, err := os.ReadFile("../../calls.txt")
	if err != nil {
		t.Fatal(err)
	}
	calls, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 290 || calls[0].Name != "MPI_Send" || calls[289].Name != "MPIO_Testsome" {
		t.Fatalf("%d calls, first %s, last %s; want 290 from MPI_Send to MPIO_Testsome", len(calls), calls[0].Name, calls[len(calls)-1].Name)
	}
	g := calls[54] // MPI_Gather
	if g.Name != "MPI_Gather" || g.Args[5].Name != "recvcount" || g.Args[5].Cond != "commrank==root" {
		t.Errorf("MPI_Gather: %+v", g)
	}
	ts := calls[40] // MPI_Type_struct
	if ts.Args[2].Since != [3]int{0, 6, 9} || ts.Args[3].Before != [3]int{0, 6, 9} {
		t.Errorf("MPI_Type_struct: %+v", ts)
	}
	if in := calls[124]; in.Name != "MPI_Init" || !in.Args[0].DupCount || in.Args[0].Before != [3]int{0, 6, 2} {
		t.Errorf("MPI_Init: %+v", in)
	}
	if ReadName(calls[72]) != "readCommGroup" || TypeName(calls[282]) != "ioTestArgs" {
		t.Errorf("names %s %s", ReadName(calls[72]), TypeName(calls[282]))
	}
}

// TestParseErrors checks that a bad table names the line and the problem.
func TestParseErrors(t *testing.T) {
	for src, want := range map[string]string{
		"Foo a:int\n":                "calls.txt:1: expected an MPI function name",
		"MPI_X a:int\nMPI_Y a:bad":   "calls.txt:2: MPI_Y: unknown type \"bad\"",
		"MPI_X a:int a:int":          "argument \"a\" given twice",
		"MPI_X a:int?a==b":           "condition \"a==b\" names an argument",
		"MPI_X a:int<0.6":            "expected a version X.Y.Z",
		"MPI_X a:int/dupcount<0.6.2": "/dupcount applies to argv only",
		"# only a comment\n":         "expected at least one call",
	} {
		_, err := Parse([]byte(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", src, err, want)
		}
	}
}

// FuzzParse checks that Parse and Generate never panic, and that whatever
// Parse accepts Generate turns into Go that parses.
func FuzzParse(f *testing.F) {
	f.Add([]byte("MPI_Send count:int datatype:datatype\nMPI_X a:int b:int c:int[]?a==b d:int>=0.6.8\nMPI_P -\n"))
	f.Add([]byte("MPI_Init argv:argv/dupcount<0.6.2\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		if _, err := Parse(src); err != nil {
			return
		}
		if _, err := Generate(src); err != nil && !strings.Contains(err.Error(), "does not parse") {
			t.Fatal(err)
		}
	})
}
