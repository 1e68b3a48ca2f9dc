// Command notesd serves the tinynotes HTTP API.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"example.com/tinynotes/internal/api"
	"example.com/tinynotes/internal/auth"
	"example.com/tinynotes/internal/config"
	"example.com/tinynotes/internal/storage"
)

func main() {
	configPath := flag.String("config", "", "path to a KEY=VALUE settings file (the environment wins)")
	addr := flag.String("addr", "", "listen address (overrides NOTESD_ADDR)")
	backup := flag.Bool("backup", false, "write a JSON-lines dump of all notes to NOTESD_BACKUP_DIR and exit")
	flag.Parse()

	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if err := run(logger, *configPath, *addr, *backup); err != nil {
		logger.Error("notesd stopped", "err", err)
		os.Exit(1)
	}
}

func run(logger *slog.Logger, configPath, addr string, backup bool) error {
	cfg, err := config.Load(configPath, os.LookupEnv)
	if err != nil {
		return err
	}
	if addr != "" {
		cfg.Addr = addr
	}
	logger.Info("starting notesd", "config", cfg)

	store, err := storage.Open(cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer store.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if backup {
		path, err := store.Backup(ctx, cfg.BackupDir, time.Now())
		if err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		logger.Info("backup written", "path", path)
		return nil
	}

	sessions := auth.NewManager([]byte(cfg.SessionSecret), cfg.SessionTTL)
	go sessions.RunJanitor(ctx, time.Minute)

	srv := &http.Server{
		Addr:              cfg.Addr,
		Handler:           api.NewServer(store, sessions, logger, cfg.MaxBodyBytes).Routes(),
		ReadHeaderTimeout: 5 * time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	logger.Info("listening", "addr", cfg.Addr)

	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}
