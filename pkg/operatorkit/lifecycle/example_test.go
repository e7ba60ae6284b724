package lifecycle_test

import (
	"fmt"

	"opctl.dev/opctl/pkg/operatorkit/lifecycle"
)

func ExampleMachine() {
	m := lifecycle.Standard()
	phase, waiting := m.Next(lifecycle.Starting, lifecycle.Facts{Progressing: true})
	fmt.Println(phase, "waiting for", waiting)
	phase, _ = m.Next(phase, lifecycle.Facts{Available: true})
	fmt.Println(phase)
	_, _, err := m.Request(lifecycle.Running, lifecycle.Ended, lifecycle.Facts{})
	fmt.Println(err)
	// Output:
	// Starting waiting for the application to become available
	// Running
	// lifecycle transition Running → Ended is not allowed; from Running the graph allows: Servicing, Failed, Stopping
}
