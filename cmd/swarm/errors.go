package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/nexus"
)

// exitError carries an exit code through cobra.
type exitError struct {
	code   int
	err    error
	silent bool // already reported
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// usageError marks bad usage or bad input: exit code 2.
func usageError(err error) error { return &exitError{code: exitUsage, err: err} }

// exitCode returns an error that makes swarm exit with code without printing
// anything more (the command has already reported).
func exitCode(code int) error { return &exitError{code: code, silent: true} }

// Exit codes shared by several commands (README "Exit codes").
const (
	// exitUsage: bad usage or bad input; nothing was run.
	exitUsage = 2
	// exitIncomplete: the result finished but did not judge every planned
	// bundle, or the cost ceiling stopped it (swarm run, swarm compare).
	exitIncomplete = 3
	// exitTampered: shadow scoring is invalid, the sealed criteria changed
	// after sealing (swarm run, swarm shadow verify).
	exitTampered = 4
	// exitWrite: the run directory (or another output) could not be
	// written: a full disk, an I/O error. The message names the file and
	// the reason; nothing is said to be complete that is not on disk.
	exitWrite = 5
)

// usageArgs wraps a cobra positional-argument validator (cobra.ExactArgs,
// cobra.NoArgs...) so that what it refuses is a usage error (exit 2).
func usageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return usageError(err)
		}
		return nil
	}
}

// flagError is the FlagErrorFunc of every command: a flag cobra cannot
// parse (unknown, bad value, missing value) is a usage error.
func flagError(c *cobra.Command, err error) error {
	return usageError(fmt.Errorf("%w\n%s", err, "See '"+c.CommandPath()+" --help'."))
}

// toExit makes nexus' bad-input errors usage errors, and its failed writes
// exit 5.
func toExit(err error) error {
	switch {
	case errors.Is(err, config.ErrBadInput):
		return usageError(err)
	case errors.Is(err, nexus.ErrWrite):
		return &exitError{code: exitWrite, err: err}
	}
	return err
}

// exitCodeOf maps an error returned by a command to the process exit code:
// the code an exitError carries, else 1.
func exitCodeOf(err error) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}
