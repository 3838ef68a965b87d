package nn

import "fmt"

// Label names the architecture with its optional layers.
func (c Config) Label() string {
	s := c.Arch
	if c.InputLayer > 0 {
		s += fmt.Sprintf(", input layer %d", c.InputLayer)
	}
	if c.HeadHidden > 0 {
		s += fmt.Sprintf(", hidden layer %d", c.HeadHidden)
	}
	return s
}
