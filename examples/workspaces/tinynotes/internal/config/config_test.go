package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const secret = "0123456789abcdef0123456789abcdef"

func env(m map[string]string) LookupFunc {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestLoadDefaults(t *testing.T) {
	cfg, err := Load("", env(map[string]string{
		"NOTESD_DATABASE_URL":   "file:test.db",
		"NOTESD_SESSION_SECRET": secret,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != ":8080" || cfg.SessionTTL != 12*time.Hour || cfg.MaxBodyBytes != 1<<20 {
		t.Errorf("defaults not applied: %+v", cfg)
	}
}

func TestEnvironmentWinsOverFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notesd.env")
	file := "# comment\nNOTESD_ADDR=:9000\nNOTESD_DATABASE_URL=file:from-file.db\nNOTESD_SESSION_SECRET=" + secret + "\n"
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, env(map[string]string{"NOTESD_ADDR": ":7000"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != ":7000" || cfg.DatabaseURL != "file:from-file.db" {
		t.Errorf("got addr %q, database %q", cfg.Addr, cfg.DatabaseURL)
	}
}

func TestLoadRejects(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"missing database", map[string]string{"NOTESD_SESSION_SECRET": secret}, "NOTESD_DATABASE_URL"},
		{"short secret", map[string]string{"NOTESD_DATABASE_URL": "file:x.db", "NOTESD_SESSION_SECRET": "short"}, "NOTESD_SESSION_SECRET"},
		{"bad ttl", map[string]string{"NOTESD_DATABASE_URL": "file:x.db", "NOTESD_SESSION_SECRET": secret, "NOTESD_SESSION_TTL": "soon"}, "NOTESD_SESSION_TTL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load("", env(tc.env))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to name %s", err, tc.want)
			}
		})
	}
}
