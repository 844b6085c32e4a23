package contract_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// document is the file integrators download and generate clients from
// (the drift test in http/public keeps it equal to the served one).
const document = "../../../docs/openapi.json"

// nodeTools makes sure node and the packages pinned in package-lock.json
// are here. Without node or npm the test is skipped with a message, except
// in CI, where they are part of the machine. node_modules is installed
// with npm ci when absent or older than package.json or the lockfile (make
// test does the same before the run, as make node-tools).
func nodeTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not found: CI must have Node.js (>= 20.19) and npm for the contract checks", tool)
			}
			t.Skipf("%s not found: the contract checks run Node.js tools (Redocly CLI, openapi-typescript, tsc); install Node.js >= 20.19 and npm to run them", tool)
		}
	}
	if err := installOnce(); err != nil {
		t.Fatal(err)
	}
}

var installOnce = sync.OnceValue(func() error {
	current := true
	inst, err := os.Stat(filepath.Join("node_modules", ".package-lock.json"))
	if err != nil {
		current = false
	}
	for _, f := range []string{"package-lock.json", "package.json"} {
		fi, err := os.Stat(f)
		if err != nil {
			return err
		}
		current = current && !inst.ModTime().Before(fi.ModTime())
	}
	if current {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return errors.New("npm ci in ops/proving/contract: " + err.Error() + "\n" + string(out))
	}
	return nil
})

// run runs a command in this folder with quiet Node.js tools; a non-zero
// exit is returned as code, not as an error, since the tools report
// findings that way.
func run(t *testing.T, env []string, name string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1")
	cmd.Env = append(cmd.Env, env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, e.String())
	}
	return o.String(), e.String(), code
}

// bin is a tool installed in node_modules.
func bin(name string) string { return filepath.Join("node_modules", ".bin", name) }
