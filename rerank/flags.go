package rerank

import "flag"

// Flags registers the time reranker's option a service sets, --recent-half-life, defaulting to
// o's value when set and else to DefaultOptions'. The other options are tuned constants
// (DefaultOptions) and have no flag. Check the value with CheckHalfLife after parsing.
func (o *Options) Flags(fs *flag.FlagSet) {
	d := DefaultOptions()
	if o.RecentHalfLifeYears != 0 {
		d.RecentHalfLifeYears = o.RecentHalfLifeYears
	}
	fs.Float64Var(&o.RecentHalfLifeYears, "recent-half-life", d.RecentHalfLifeYears,
		"default of the time need recent: age in `years` at which a passage earns half the credit of a current one (news: 0.1-0.5, encyclopedia: 3); a query's recent_half_life_years overrides it")
}
