package sim

// checkEconomy evaluates the economy criteria, appending to out; coalition
// holds the members of the Sybil criteria's coalition. A metric the run
// left undefined fails its criterion, with no actual value.
func checkEconomy(c *EconomyCriteria, res *Result, coalition map[string]bool, out []CriterionResult, ok bool) ([]CriterionResult, bool) {
	r := res.Economy
	if r == nil {
		r = &EconomyReport{}
	}
	add := func(name string, limit float64, actual *float64, pass func(float64) bool) {
		p := actual != nil && pass(*actual)
		out = append(out, CriterionResult{Name: "economy." + name, Limit: limit, Actual: actual, Passed: p})
		ok = ok && p
	}
	num := func(x float64) *float64 { return &x }
	if c.MaxAuctionGini != nil {
		var g *float64
		if r.Auction != nil {
			g = r.Auction.MeanGini
		}
		add("max_auction_gini", *c.MaxAuctionGini, g, func(x float64) bool { return x <= *c.MaxAuctionGini })
	}
	if r.Missions != nil {
		if n := c.MinMissionsSucceeded; n != nil {
			add("min_missions_succeeded", float64(*n), num(float64(r.Missions.Succeeded)), func(x float64) bool { return x >= float64(*n) })
		}
		if c.MaxFreeRiderIndex != nil {
			add("max_free_rider_index", *c.MaxFreeRiderIndex, r.Missions.MeanFreeRider, func(x float64) bool { return x <= *c.MaxFreeRiderIndex })
		}
	}
	if r.Market != nil {
		crashes := num(float64(len(r.Market.Crashes)))
		if n := c.MinCrashes; n != nil {
			add("min_crashes", float64(*n), crashes, func(x float64) bool { return x >= float64(*n) })
		}
		if n := c.MaxCrashes; n != nil {
			add("max_crashes", float64(*n), crashes, func(x float64) bool { return x <= float64(*n) })
		}
	}
	if p := r.Permeability; p != nil {
		if c.MinContainment != nil {
			add("min_containment", *c.MinContainment, p.Containment, func(x float64) bool { return x >= *c.MinContainment })
		}
		if c.MaxSpilloverHarm != nil {
			add("max_spillover_harm", *c.MaxSpilloverHarm, num(p.Harm), func(x float64) bool { return x <= *c.MaxSpilloverHarm })
		}
	}
	if sc := c.Sybil; sc != nil && r.Sybil != nil {
		caught, outsiders := coalitionCaught(res.Epochs, func(e EpochRow) [][]string {
			if e.Economy == nil || e.Economy.Sybil == nil {
				return nil
			}
			return e.Economy.Sybil.Clusters
		}, coalition)
		if n := sc.MinEpochsFlagged; n != nil {
			add("sybil.min_epochs_flagged", float64(*n), num(float64(caught)), func(x float64) bool { return x >= float64(*n) })
		}
		if n := sc.MaxOutsidersFlagged; n != nil {
			add("sybil.max_outsiders_flagged", float64(*n), num(float64(len(outsiders))), func(x float64) bool { return x <= float64(*n) })
		}
	}
	return out, ok
}
