// Package pipeline offers textarmor's end-to-end jobs as library calls:
// load a dataset the way the CLI does, train a model with a defense,
// attack a model on a split, evaluate it. Every `textarmor` verb that runs
// one of these jobs parses its flags into a configuration of this package
// and makes one call; a Go program makes the same call.
//
// Configurations are plain structs with the CLI's defaults in their
// constructors; a configuration a job cannot run is refused with a
// *ConfigError naming the field, before any data is read.
package pipeline

import "fmt"

// ConfigError reports a configuration that cannot run: a missing or
// contradictory setting, a value out of range, an unknown name. The CLI
// answers it with a usage error (exit code 2).
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// configErrorf formats a *ConfigError.
func configErrorf(format string, args ...any) error {
	return &ConfigError{fmt.Errorf(format, args...)}
}
