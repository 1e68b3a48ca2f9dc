package main

import "fmt"

func main() {
	fmt.Println("app: starting")
}
