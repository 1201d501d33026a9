package dumpi

// Labels that follow the MPI functions.
const (
	labelAllFunctions  = len(functionNames)
	labelFunctionEnter = labelAllFunctions + 1
	labelFunctionExit  = labelAllFunctions + 2
	labelEnd           = labelAllFunctions + 3
)

// label returns the index of an MPI function name; it panics on a name
// that is not in the table, which a test catches.
func label(name string) int {
	for i, n := range functionNames {
		if n == name {
			return i
		}
	}
	panic("dumpi: no function " + name)
}
