package bench

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Autovacuum makes the server run autovacuum during the bench, as a
// production server does: a write whose cost grows with dead rows must
// show it. Autovacuum is a server-wide setting, so when the server has it
// off (this machine's development cluster does, in its conf.d) and turn is
// true, it is turned on with ALTER SYSTEM and a reload, and restore puts
// back what was there. It returns the state the bench runs with ("on",
// "on (turned on for the run)" or "off …").
func Autovacuum(ctx context.Context, ownerURL string, turn bool) (state string, restore func(), err error) {
	restore = func() {}
	u, err := url.Parse(ownerURL)
	if err != nil {
		return "", restore, fmt.Errorf("bench: autovacuum: %w", err)
	}
	u.Path = "/postgres" // the server's setting: any database will do, and this one exists
	serverURL := u.String()
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return "", restore, fmt.Errorf("bench: autovacuum: %w", err)
	}
	defer conn.Close(ctx)
	var setting, file string
	if err := conn.QueryRow(ctx, "SELECT setting, coalesce(sourcefile, '') FROM pg_settings WHERE name = 'autovacuum'").Scan(&setting, &file); err != nil {
		return "", restore, fmt.Errorf("bench: autovacuum: %w", err)
	}
	if setting == "on" {
		return "on", restore, nil
	}
	if !turn {
		return "off (the server's setting, kept by -autovacuum=false)", restore, nil
	}
	// A value already set by ALTER SYSTEM is put back as it was; otherwise
	// the entry is removed and the configuration files rule again.
	undo := "ALTER SYSTEM RESET autovacuum"
	if strings.HasSuffix(file, "postgresql.auto.conf") {
		undo = "ALTER SYSTEM SET autovacuum = " + setting
	}
	if _, err := conn.Exec(ctx, "ALTER SYSTEM SET autovacuum = on"); err != nil {
		return "off (the server's setting; turning it on failed: " + err.Error() + ")", restore, nil
	}
	if err := reload(ctx, conn, "on"); err != nil {
		return "", restore, err
	}
	restore = func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, serverURL)
		if err == nil {
			defer c.Close(ctx)
			if _, err = c.Exec(ctx, undo); err == nil {
				err = reload(ctx, c, setting)
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: autovacuum not put back (%s; run it by hand): %v\n", undo, err)
		}
	}
	return "on (turned on for the run)", restore, nil
}

// reload asks the server to read its configuration and waits until
// autovacuum reads want.
func reload(ctx context.Context, conn *pgx.Conn, want string) error {
	if _, err := conn.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		return fmt.Errorf("bench: reload: %w", err)
	}
	for range 50 {
		var got string
		if err := conn.QueryRow(ctx, "SHOW autovacuum").Scan(&got); err != nil {
			return fmt.Errorf("bench: autovacuum: %w", err)
		}
		if got == want {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("bench: autovacuum still not %s after the reload", want)
}
