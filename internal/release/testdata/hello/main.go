// Command hello is the small program package release's test builds.
package main

import "fmt"

func main() { fmt.Println("hello") }
