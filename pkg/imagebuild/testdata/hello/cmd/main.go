// Command hello is the program imagebuild's tests put in an image.
package main

import (
	"fmt"

	"example.com/greet"
)

func main() { fmt.Println(greet.Hello()) }
