package main

import "testing"

func TestInTests(t *testing.T) {
	if inTests(2) != 4 {
		t.Fatal("inTests(2) != 4")
	}
}
