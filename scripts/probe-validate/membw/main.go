// Command membw is the memory-bandwidth neighbour of probe-validate's
// membw target: it copies between two 128 MiB buffers (far larger than
// any cache) until it is killed, so that a worker on the other core finds
// less memory bandwidth, and its memory-bound phases slow down more than
// its compute-bound ones.
package main

func main() {
	const n = 128 << 20
	a, b := make([]byte, n), make([]byte, n)
	for i := range a {
		a[i] = byte(i)
	}
	for {
		copy(b, a)
		copy(a, b)
	}
}
