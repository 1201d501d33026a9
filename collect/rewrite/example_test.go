package rewrite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/parscope/parscope/collect/rewrite"
)

// Rewrite a package and look at its block dictionary.
func ExamplePackage() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	src := `package ping

func Ping(c chan int) int {
	c <- 1
	return <-c
}
`
	os.WriteFile(filepath.Join(dir, "ping.go"), []byte(src), 0o644)
	res, err := rewrite.Package(context.Background(), dir, rewrite.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, b := range res.Dict.Blocks {
		fmt.Println(b.ID, b.Kind, b.Line, b.Description)
	}
	for _, f := range res.Files {
		if f.Name == "ping.go" {
			fmt.Printf("%s", f.Src[len("package ping\n\n"):])
		}
	}
	// Output:
	// 0 start 0 process start
	// 1 entry 3 entry of Ping
	// 2 next 5 statement at ping.go:5
	// 3 exit 6 exit of Ping
	// 4 end 0 process end
	// func Ping(c chan int) int { parscopeP := parscopeSelf(); parscopeP.Block(1); defer parscopeP.Block(3);
	// 	parscopeSend(parscopeP, c , 1, 8, 1)
	// 	parscopeP.Block(2); return parscopeRecv(parscopeP, c, 8, 2)
	// }
}
