// Command swarm runs multi-agent LLM missions judged by sealed criteria, and
// the distributional safety sandbox.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:]))
}

// run executes the CLI and returns the process exit code.
func run(ctx context.Context, args []string) int {
	return runCLI(ctx, args, os.Stdin, os.Stdout, os.Stderr)
}

// runCLI is run with its streams given; standard error is scrubbed of secrets.
func runCLI(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, scrubbed(stderr))
	root := newRootCmd(app)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && !ee.silent {
			fmt.Fprintln(app.Err, "error:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(app.Err, "error:", err)
	if isUsageError(err) {
		return 2
	}
	return 1
}
