package nexus_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
)

func TestCheckMission(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		why     string
		text    string
		limit   int
		wantErr error
		wantMsg string
	}{
		{"plain text", "tabs, newlines and CRLF are text", "# Title\r\n\tdo this\nthen ünïcode ✓\n", 0, nil, ""},
		{"NUL byte", "a binary file pasted as a mission", "line one\nab\x00c", 0, nexus.ErrMissionNotText, "mission m.md: byte 11 (line 2, column 3): a NUL byte"},
		{"escape sequence", "control characters drive terminals and confuse models", "go\x1b[2J", 0, nexus.ErrMissionNotText, "byte 2 (line 1, column 3): control character U+001B"},
		{"invalid UTF-8", "a Latin-1 or binary file", "caf\xe9\n", 0, nexus.ErrMissionNotText, "byte 3 (line 1, column 4): invalid UTF-8 byte 0xe9"},
		{"C1 control", "U+0085 is a control character too", "a\u0085b", 0, nexus.ErrMissionNotText, "control character U+0085"},
		{"too large", "a 10 MB mission ran up cost until the ceiling stopped it", strings.Repeat("x", 65), 64, nexus.ErrMissionTooLarge, "mission m.md is 65 bytes, more than the limit of 64"},
		{"default cap", "0 means the documented default (64 KiB)", strings.Repeat("x", 64<<10+1), 0, nexus.ErrMissionTooLarge, "more than the limit of 65536"},
		{"at the cap", "the cap itself is allowed", strings.Repeat("x", 64), 64, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := nexus.CheckMission("m.md", tc.text, tc.limit)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("%s: %v", tc.why, err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) || !errors.Is(err, config.ErrBadInput) {
				t.Fatalf("%s: err = %v, want %v and ErrBadInput", tc.why, err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("%s: %q does not say %q", tc.why, err, tc.wantMsg)
			}
		})
	}
}

func TestRunRefusesNonTextMissionBeforeAnyCall(t *testing.T) {
	t.Parallel()
	// Library users get the check too: nexus.Run refuses in intake, before
	// a run directory or a call exists.
	reg := mockRegistry(mock.Options{})
	out := filepath.Join(t.TempDir(), "run")
	_, err := nexus.Run(t.Context(), nexus.Options{Config: defaultConfig(t), Registry: reg, Mission: "Audit this\x00\x01\x02",
		MissionName: "bin.md", Provider: providers.Ref{Kind: "mock", Model: "honest"}, OutDir: out})
	if !errors.Is(err, nexus.ErrMissionNotText) || !errors.Is(err, config.ErrBadInput) {
		t.Fatalf("err = %v, want ErrMissionNotText", err)
	}
	if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("a run directory was created for a refused mission: %v", serr)
	}
	cfg := defaultConfig(t)
	cfg.Run.MaxMissionBytes = 100
	_, err = nexus.Run(t.Context(), nexus.Options{Config: cfg, Registry: reg, Mission: "# Big\n" + strings.Repeat("word ", 100),
		MissionName: "big.md", Provider: providers.Ref{Kind: "mock", Model: "honest"}, OutDir: out})
	if !errors.Is(err, nexus.ErrMissionTooLarge) {
		t.Fatalf("err = %v, want ErrMissionTooLarge with run.max_mission_bytes: 100", err)
	}
}

func TestReadMissionStopsAtTheHardLimit(t *testing.T) {
	t.Parallel()
	_, err := nexus.ReadMission(strings.NewReader(strings.Repeat("x", config.MaxMissionBytesLimit+10)))
	if !errors.Is(err, nexus.ErrMissionTooLarge) {
		t.Fatalf("err = %v, want ErrMissionTooLarge", err)
	}
	got, err := nexus.ReadMission(strings.NewReader("ok"))
	if err != nil || got != "ok" {
		t.Fatalf("ReadMission(ok) = %q, %v", got, err)
	}
}
