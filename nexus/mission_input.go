package nexus

import (
	"errors"
	"fmt"
	"io"
	"unicode"
	"unicode/utf8"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/internal/textsafe"
)

// Errors of mission intake; both also wrap ErrBadInput.
var (
	// ErrMissionNotText: the mission holds invalid UTF-8, a NUL or another
	// control character than tab, newline and carriage return.
	ErrMissionNotText = errors.New("the mission is not text")
	// ErrMissionTooLarge: the mission is larger than run.max_mission_bytes
	// (or, while reading, than MaxMissionBytesLimit).
	ErrMissionTooLarge = errors.New("the mission is too large")
)

// CheckMission refuses a mission that is not plain text or is larger than
// limit bytes (limit ≤ 0: DefaultMaxMissionBytes). name (a file name,
// "stdin"; may be empty) is used in the error, which gives the byte offset,
// line and column of the first offending byte. Every LLM call of a run
// carries the mission, so a binary or huge one only burns money until the
// cost ceiling stops it.
func CheckMission(name, text string, limit int) error {
	if limit <= 0 {
		limit = config.DefaultMaxMissionBytes
	}
	where := "mission"
	if name != "" {
		where = "mission " + textsafe.Printable(name)
	}
	if len(text) > limit {
		return fmt.Errorf("%w: %w: %s is %d bytes, more than the limit of %d (run.max_mission_bytes)", config.ErrBadInput, ErrMissionTooLarge, where, len(text), limit)
	}
	line, col := 1, 1
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		var what string
		switch {
		case r == utf8.RuneError && n == 1:
			what = fmt.Sprintf("invalid UTF-8 byte 0x%02x", text[i])
		case r == 0:
			what = "a NUL byte"
		case r == '\t' || r == '\n' || r == '\r':
		case unicode.IsControl(r):
			what = fmt.Sprintf("control character %U", r)
		}
		if what != "" {
			return fmt.Errorf("%w: %w: %s: byte %d (line %d, column %d): %s; a mission must be plain UTF-8 text", config.ErrBadInput, ErrMissionNotText, where, i, line, col, what)
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += n
	}
	return nil
}

// ReadMission reads a mission from r, refusing (with ErrMissionTooLarge)
// more than MaxMissionBytesLimit bytes without reading further: the
// configured cap is checked by CheckMission once the configuration is known.
func ReadMission(r io.Reader) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, config.MaxMissionBytesLimit+1))
	if err != nil {
		return "", err
	}
	if len(b) > config.MaxMissionBytesLimit {
		return "", fmt.Errorf("%w: %w: more than %d bytes (the most run.max_mission_bytes allows)", config.ErrBadInput, ErrMissionTooLarge, config.MaxMissionBytesLimit)
	}
	return string(b), nil
}
