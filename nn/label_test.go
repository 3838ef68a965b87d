package nn

import "testing"

func TestConfigLabel(t *testing.T) {
	c := DefaultConfig("cnn")
	if got := c.Label(); got != "cnn" {
		t.Errorf("plain: %q", got)
	}
	c.InputLayer, c.HeadHidden = 100, 50
	if got := c.Label(); got != "cnn, input layer 100, hidden layer 50" {
		t.Errorf("with layers: %q", got)
	}
}
