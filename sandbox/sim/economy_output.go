package sim

import (
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
)

// econColumn is one economy column of epochs.csv: its header, whether the
// run has it, and its cell in an epoch row ("" when undefined).
type econColumn struct {
	name string
	has  func(*EconomyReport) bool
	cell func(*EconomyEpoch) string
}

func optF(p *float64) string {
	if p == nil {
		return ""
	}
	return ftoa(*p)
}

var econColumns = []econColumn{
	{"auction_gini", hasAuction, auc(func(x *AuctionEpoch) string { return optF(x.Gini) })},
	{"auction_total_utility", hasAuction, auc(func(x *AuctionEpoch) string { return ftoa(x.TotalUtility) })},
	{"auction_envy_free", hasAuction, auc(func(x *AuctionEpoch) string { return strconv.FormatBool(x.EnvyFree) })},
	{"mission_status", hasMissions, mis(func(x *MissionEpoch) string { return x.Status })},
	{"mission_score", hasMissions, mis(func(x *MissionEpoch) string { return ftoa(x.Score) })},
	{"free_rider_index", hasMissions, mis(func(x *MissionEpoch) string { return optF(x.FreeRider) })},
	{"mission_paid", hasMissions, mis(func(x *MissionEpoch) string { return ftoa(x.Paid) })},
	{"market_price", hasMarket, mkt(func(x *MarketEpoch) string { return ftoa(x.Price) })},
	{"volatility", hasMarket, mkt(func(x *MarketEpoch) string { return optF(x.Volatility) })},
	{"crashes", hasMarket, mkt(func(x *MarketEpoch) string { return itoa(x.Crashes) })},
	{"halted_ticks", hasMarket, mkt(func(x *MarketEpoch) string { return itoa(x.HaltedTicks) })},
	{"threat", hasPerm, prm(func(x *PermeabilityEpoch) string { return ftoa(x.Threat) })},
	{"trust", hasPerm, prm(func(x *PermeabilityEpoch) string { return ftoa(x.Trust) })},
	{"permeability", hasPerm, prm(func(x *PermeabilityEpoch) string { return ftoa(x.Permeability) })},
	{"spillovers", hasPerm, prm(func(x *PermeabilityEpoch) string { return itoa(x.Spillovers) })},
	{"blocked", hasPerm, prm(func(x *PermeabilityEpoch) string { return itoa(x.Blocked) })},
	{"spillover_harm", hasPerm, prm(func(x *PermeabilityEpoch) string { return ftoa(x.Harm) })},
	{"containment", hasPerm, prm(func(x *PermeabilityEpoch) string { return optF(x.Containment) })},
	{"mean_trust", hasIdentity, idn(func(x *IdentityEpoch) string { return ftoa(x.MeanTrust) })},
	{"sybil_flagged", hasSybil, syb(func(x *SybilEpoch) string { return itoa(x.Flagged) })},
	{"sybil_blocked", hasSybil, syb(func(x *SybilEpoch) string { return itoa(x.Blocked) })},
}

func hasAuction(r *EconomyReport) bool  { return r.Auction != nil }
func hasMissions(r *EconomyReport) bool { return r.Missions != nil }
func hasMarket(r *EconomyReport) bool   { return r.Market != nil }
func hasPerm(r *EconomyReport) bool     { return r.Permeability != nil }
func hasIdentity(r *EconomyReport) bool { return r.Identity != nil }
func hasSybil(r *EconomyReport) bool    { return r.Sybil != nil }

// econCSV returns the economy's extra header and, per epoch, its cells (no
// columns without an economy, so epochs.csv is then unchanged). An epoch
// without a mission running has empty mission cells.
func econCSV(res *Result) (header []string, row func(EpochRow) []string) {
	if res.Economy == nil {
		return nil, func(EpochRow) []string { return nil }
	}
	var cols []econColumn
	for _, c := range econColumns {
		if c.has(res.Economy) {
			cols = append(cols, c)
			header = append(header, c.name)
		}
	}
	return header, func(e EpochRow) []string {
		out := make([]string, len(cols))
		if e.Economy != nil {
			for i, c := range cols {
				out[i] = c.cell(e.Economy)
			}
		}
		return out
	}
}

// Readers of one mechanism's part of an epoch (its CSV cells, its plotted
// values): "" or nil when that part is absent (no mission running).
func auc[R any](f func(*AuctionEpoch) R) func(*EconomyEpoch) R {
	return func(e *EconomyEpoch) R { return field(e.Auction, f) }
}
func mis[R any](f func(*MissionEpoch) R) func(*EconomyEpoch) R {
	return func(e *EconomyEpoch) R { return field(e.Mission, f) }
}
func mkt[R any](f func(*MarketEpoch) R) func(*EconomyEpoch) R {
	return func(e *EconomyEpoch) R { return field(e.Market, f) }
}
func prm[R any](f func(*PermeabilityEpoch) R) func(*EconomyEpoch) R {
	return func(e *EconomyEpoch) R { return field(e.Permeability, f) }
}
func idn[R any](f func(*IdentityEpoch) R) func(*EconomyEpoch) R {
	return func(e *EconomyEpoch) R { return field(e.Identity, f) }
}
func syb[R any](f func(*SybilEpoch) R) func(*EconomyEpoch) R {
	return func(e *EconomyEpoch) R { return field(e.Sybil, f) }
}

// field is f(x), or R's zero value ("", nil) when x is absent.
func field[T, R any](x *T, f func(*T) R) R {
	if x == nil {
		var zero R
		return zero
	}
	return f(x)
}

// plotEconomy draws economy.png/svg: the economy's rates over epochs
// (auction Gini, free-rider index, volatility, permeability, containment,
// mean trust), each only where defined. No economy: no plot.
func plotEconomy(dir string, res *Result) error {
	if res.Economy == nil {
		return nil
	}
	series := []struct {
		name string
		y    func(*EconomyEpoch) *float64
	}{
		{"auction Gini", auc(func(x *AuctionEpoch) *float64 { return x.Gini })},
		{"free-rider index", mis(func(x *MissionEpoch) *float64 { return x.FreeRider })},
		{"volatility", mkt(func(x *MarketEpoch) *float64 { return x.Volatility })},
		{"permeability π", prm(func(x *PermeabilityEpoch) *float64 { return &x.Permeability })},
		{"containment", prm(func(x *PermeabilityEpoch) *float64 { return x.Containment })},
		{"mean trust", idn(func(x *IdentityEpoch) *float64 { return &x.MeanTrust })},
		{"Sybil-flagged share", func(e *EconomyEpoch) *float64 {
			if e.Sybil == nil || len(res.Agents) == 0 {
				return nil
			}
			x := float64(e.Sybil.Flagged) / float64(len(res.Agents))
			return &x
		}},
	}
	var args []any
	for _, s := range series {
		var xy plotter.XYs
		for _, e := range res.Epochs {
			if e.Economy == nil {
				continue
			}
			if y := s.y(e.Economy); y != nil {
				xy = append(xy, plotter.XY{X: float64(e.Epoch), Y: *y})
			}
		}
		if len(xy) > 0 {
			args = append(args, s.name, xy)
		}
	}
	if len(args) == 0 {
		return nil
	}
	p := plot.New()
	p.Title.Text = res.ScenarioID + ": economy per epoch"
	p.X.Label.Text, p.Y.Label.Text = "epoch", "rate"
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return err
	}
	return save(p, dir, "economy")
}
