package db_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/schema/ids"
)

// Issue 15 item 4: the roles the service connects as log no statement text
// (which carries client data) to the server log: not with an error, not by
// duration, no bind parameters, errors without DETAIL.
func TestAppRolesLogNoStatementText(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"log_min_error_statement": "panic", "log_error_verbosity": "terse", "log_statement": "none",
		"log_min_duration_statement": "-1", "log_parameter_max_length": "0", "log_parameter_max_length_on_error": "0",
	}
	for name, db := range map[string]*bun.DB{"app": testkit.DB(t), "worker": testkit.WorkerDB(t)} {
		for param, value := range want {
			var got string
			if err := db.QueryRowContext(context.Background(), "SELECT current_setting(?)", param).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != value {
				t.Errorf("%s role: %s = %s, want %s", name, param, got, value)
			}
		}
	}
}

// Issue 15 item 4, seen in the log itself when this machine's server log
// can be read (OFICINA_TEST_PG_LOG, the logging collector's file, or
// Debian's /var/log/postgresql): a failing statement of the app role leaves
// no trace of its text, where the owner's (the control) does.
func TestFailingStatementTextNeverReachesTheServerLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := serverLog(t)
	app, control := "client-data-"+ids.New("x"), "control-"+ids.New("x")
	_, _ = testkit.DB(t).ExecContext(ctx, fmt.Sprintf("SELECT 1/0 WHERE '%s' <> ''", app))
	_, _ = testkit.OwnerDB(t).ExecContext(ctx, fmt.Sprintf("SELECT 1/0 WHERE '%s' <> ''", control))
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Skipf("server log %s not readable: %v", path, err)
		}
		if bytes.Contains(b, []byte(app)) {
			t.Fatalf("the app role's failing statement reached %s", path)
		}
		if bytes.Contains(b, []byte(control)) {
			return // the owner's did: the log is live, and the app's is not in it
		}
		if time.Now().After(deadline) {
			t.Skipf("the control statement never reached %s: not this server's log", path)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func serverLog(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("OFICINA_TEST_PG_LOG"); p != "" {
		return p
	}
	var current *string
	if err := testkit.OwnerDB(t).QueryRowContext(context.Background(), "SELECT pg_current_logfile()").Scan(&current); err == nil && current != nil {
		var dir string
		_ = testkit.OwnerDB(t).QueryRowContext(context.Background(), "SHOW data_directory").Scan(&dir)
		if filepath.IsAbs(*current) {
			return *current
		}
		return filepath.Join(dir, *current)
	}
	var version string
	_ = testkit.OwnerDB(t).QueryRowContext(context.Background(), "SELECT current_setting('server_version_num')::int / 10000").Scan(&version)
	return fmt.Sprintf("/var/log/postgresql/postgresql-%s-main.log", version)
}
