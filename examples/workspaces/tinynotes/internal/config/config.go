// Package config loads notesd's settings from an optional KEY=VALUE file and
// the environment. A variable set in the environment wins over the file.
package config

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config is everything notesd needs to start.
type Config struct {
	Addr          string
	DatabaseURL   string
	SessionSecret string
	SessionTTL    time.Duration
	MaxBodyBytes  int64
	BackupDir     string
}

// LookupFunc has os.LookupEnv's signature so tests can pass a map.
type LookupFunc func(key string) (string, bool)

const (
	defaultAddr         = ":8080"
	defaultSessionTTL   = 12 * time.Hour
	defaultMaxBodyBytes = 1 << 20
	minSecretBytes      = 32
)

var keys = []string{
	"NOTESD_ADDR", "NOTESD_DATABASE_URL", "NOTESD_SESSION_SECRET",
	"NOTESD_SESSION_TTL", "NOTESD_MAX_BODY_BYTES", "NOTESD_BACKUP_DIR",
}

// Load reads path (when not empty), then the environment through lookup,
// applies defaults and validates the result.
func Load(path string, lookup LookupFunc) (Config, error) {
	values := map[string]string{}
	if path != "" {
		fromFile, err := readFile(path)
		if err != nil {
			return Config{}, err
		}
		values = fromFile
	}
	for _, k := range keys {
		if v, ok := lookup(k); ok {
			values[k] = v
		}
	}

	cfg := Config{
		Addr:          valueOr(values, "NOTESD_ADDR", defaultAddr),
		DatabaseURL:   values["NOTESD_DATABASE_URL"],
		SessionSecret: values["NOTESD_SESSION_SECRET"],
		SessionTTL:    defaultSessionTTL,
		MaxBodyBytes:  defaultMaxBodyBytes,
		BackupDir:     valueOr(values, "NOTESD_BACKUP_DIR", "backups"),
	}
	if v, ok := values["NOTESD_SESSION_TTL"]; ok {
		ttl, err := time.ParseDuration(v)
		if err != nil || ttl <= 0 {
			return Config{}, fmt.Errorf("NOTESD_SESSION_TTL: want a positive duration such as 12h, got %q", v)
		}
		cfg.SessionTTL = ttl
	}
	if v, ok := values["NOTESD_MAX_BODY_BYTES"]; ok {
		n, _ := strconv.ParseInt(v, 10, 64)
		cfg.MaxBodyBytes = n
	}

	if cfg.DatabaseURL == "" {
		return Config{}, errors.New("NOTESD_DATABASE_URL is required")
	}
	if len(cfg.SessionSecret) < minSecretBytes {
		return Config{}, fmt.Errorf("NOTESD_SESSION_SECRET must be at least %d bytes", minSecretBytes)
	}
	return cfg, nil
}

// readFile parses KEY=VALUE lines; blank lines and lines starting with # are
// skipped. Errors name the file and line.
func readFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()

	values := map[string]string{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		k, v, ok := strings.Cut(text, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%s:%d: want KEY=VALUE", path, line)
		}
		values[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return values, nil
}

func valueOr(values map[string]string, key, def string) string {
	if v, ok := values[key]; ok && v != "" {
		return v
	}
	return def
}
