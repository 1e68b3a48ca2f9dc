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
	"slices"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/swarm-dev/swarm/internal/textsafe"
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
//
// Every error ends here, cobra's included: its message is printed through
// textsafe.PrintableLines, so a path, a model name or a flag a user or a
// file supplied cannot move the cursor, retitle the window or reorder
// what is shown, whichever error quotes it and however (%s, %v).
func runCLI(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	sc := &scrubber{}
	app := newApp(stdin, stdout, scrubbed(stderr, sc))
	app.scrub = sc
	err := execute(ctx, app, args)
	var ee *exitError
	switch {
	case err == nil:
	case !errors.As(err, &ee):
		fmt.Fprintln(app.Err, "error:", textsafe.PrintableLines(err.Error()))
	case ee.err != nil && !ee.silent:
		fmt.Fprintln(app.Err, "error:", textsafe.PrintableLines(ee.err.Error()))
	}
	return exitCodeOf(err)
}

// execute builds the command tree and runs the command args name. Every
// error of bad usage comes back as a usage error (exit 2): flags through
// the FlagErrorFunc, positional arguments through usageArgs, an unknown
// command from the lookup below.
func execute(ctx context.Context, app *App, args []string) error {
	root := newRootCmd(app)
	root.SetArgs(args)
	// cobra resolves the command before running anything, and the only
	// thing it refuses there is an unknown top-level command. The shell
	// completion request command is added by cobra at execution, so it is
	// not looked up here.
	if !isCompletionRequest(args) {
		if _, _, err := root.Find(args); err != nil {
			return usageError(err)
		}
	}
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil && cmd != nil && isCompletionRequest([]string{cmd.Name()}) {
		// The completion request command fails only on its arguments
		// (it parses no flags and always succeeds once running).
		return usageError(err)
	}
	return err
}

// isCompletionRequest reports whether args ask for shell completions
// (cobra's hidden __complete command).
func isCompletionRequest(args []string) bool {
	return len(args) > 0 && slices.Contains([]string{cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd}, args[0])
}
