package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"oficina/ops/config"
	"oficina/ops/proving/hostile"
)

// runHostile attacks a running Oficina with hostile input (issue 9) and
// prints the report: cases by category, failures of the bar, mismatches
// with the contract, and GET /me per second before and after. It creates
// two companies through the admin API; it fails when the bar is broken.
func runHostile(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		t        hostile.Target
		adminURL string
	)
	cfg, _, err := config.Parse("hostile", args, func(fs *flag.FlagSet) {
		fs.StringVar(&t.URL, "url", "", "public API base URL (default http://<http-addr>)")
		fs.StringVar(&adminURL, "admin-url", "", "admin API base URL (default http://<admin-addr>)")
		fs.StringVar(&t.HookURL, "hook-url", "", "webhook URL the target's destination guard accepts (default https://127.0.0.1:9/hostile)")
		fs.IntVar(&t.Concurrency, "concurrency", 4, "groups of cases run at once")
		fs.DurationVar(&t.SpeedWindow, "speed-window", 2*time.Second, "how long GET /me is measured before and after")
		fs.IntVar(&t.SlowHeaders, "slow-headers", 32, "slowloris connections (headers a line a second)")
		fs.IntVar(&t.SlowBodies, "slow-bodies", 8, "slow-body connections (a byte a second)")
		fs.DurationVar(&t.SlowLimit, "slow-limit", 45*time.Second, "longest the server may keep a slow client")
		fs.Usage = func() {
			fmt.Fprintln(stderr, "usage: oficina hostile [-url URL] [-admin-url URL] [-admin-token T] [flags]")
			fs.PrintDefaults()
		}
	})
	if err != nil {
		return err
	}
	if t.URL == "" {
		t.URL = "http://" + loopback(cfg.HTTPAddr)
	}
	if adminURL == "" {
		adminURL = "http://" + loopback(cfg.AdminAddr)
	}
	t.AdminURL, t.AdminToken = adminURL, cfg.AdminToken
	if t.AdminToken == "" {
		b, err := os.ReadFile(filepath.Join(cfg.DataDir, "admin-token"))
		if err != nil {
			return errors.New("no admin token: pass -admin-token, set OFICINA_ADMIN_TOKEN or run oficina dev first")
		}
		t.AdminToken = strings.TrimSpace(string(b))
	}
	t.Log = func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	rep, err := hostile.Run(ctx, t)
	if err != nil {
		return err
	}
	rep.WriteText(stdout)
	if !rep.OK() {
		return fmt.Errorf("hostile: %d of %d cases broke the bar", len(rep.Failures), rep.Cases)
	}
	return nil
}

// loopback turns a listen address (":8080") into one to dial.
func loopback(addr string) string {
	if strings.HasPrefix(addr, ":") {
		return "127.0.0.1" + addr
	}
	return addr
}
