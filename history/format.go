package history

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The words a run's absent numbers are shown with: an absent number is
// never shown as 0.
const (
	// NotMeasured is shown for a number the run did not measure.
	NotMeasured = "–"
)

// ShadowText is the Shadow median as shown ("12.5%"), or NotMeasured.
func (r Run) ShadowText() string {
	if r.ShadowMedian == nil {
		return NotMeasured
	}
	return strconv.FormatFloat(*r.ShadowMedian, 'f', 1, 64) + "%"
}

// ShadowCell is ShadowText for a row of the runs list: when fewer bundles
// were judged than planned, it says how many ("12.0% (1 of 5)"), so a
// median over part of the work never reads as the whole run's.
func (r Run) ShadowCell() string {
	t := r.ShadowText()
	if r.ShadowMedian != nil && r.BundlesPlanned != nil && r.BundlesScored != nil && *r.BundlesScored < *r.BundlesPlanned {
		t += fmt.Sprintf(" (%d of %d)", *r.BundlesScored, *r.BundlesPlanned)
	}
	return t
}

// EvidenceText is "verified/cited verified, N fabricated", or NotMeasured
// without a workspace.
func (r Run) EvidenceText() string {
	if r.EvidenceVerified == nil || r.EvidenceFabricated == nil {
		return NotMeasured
	}
	cited := "?"
	if r.EvidenceCited != nil {
		cited = strconv.Itoa(*r.EvidenceCited)
	}
	return fmt.Sprintf("%d/%s verified, %d fabricated", *r.EvidenceVerified, cited, *r.EvidenceFabricated)
}

// RecallText is the recall as a percentage, or NotMeasured without ground
// truth.
func (r Run) RecallText() string {
	if r.Recall == nil {
		return NotMeasured
	}
	return strconv.FormatFloat(*r.Recall*100, 'f', 0, 64) + "%"
}

// CostText is the cost in dollars ("≥ $0.0123" when some model was
// unpriced), or NotMeasured.
func (r Run) CostText() string {
	if r.CostUSD == nil {
		return NotMeasured
	}
	s := "$" + strconv.FormatFloat(*r.CostUSD, 'f', 4, 64)
	if r.CostPartial {
		s = "≥ " + s
	}
	return s
}

// DurationText is the wall time rounded ("1.5s", "2m3s"), or NotMeasured.
func (r Run) DurationText() string {
	if r.DurationMS == nil {
		return NotMeasured
	}
	d := time.Duration(*r.DurationMS) * time.Millisecond
	switch {
	case d < time.Second:
		return d.String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

// StartedText is the start time in UTC ("2026-11-27 16:07:03"), or
// NotMeasured.
func (r Run) StartedText() string {
	if r.Started == nil {
		return NotMeasured
	}
	return r.Started.UTC().Format("2006-01-02 15:04:05")
}

// ParseTime reads a --since/--until value: a date (2026-11-27, UTC), an
// RFC 3339 time, or an age before now ("36h", "7d").
func ParseTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q: want a date (2026-11-27), an RFC 3339 time or an age (36h, 7d)", s)
}
