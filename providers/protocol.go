package providers

// The text protocol shared by the prompts package and the mock provider.
//
// The mock provider must behave the same in-process and behind its
// OpenAI-compatible HTTP server, so it reads nothing but what a request
// carries: the output schema's name and the messages' text. Prompts therefore
// lay out the parts the mock (and a human reading a transcript) relies on with
// the markers below. Real models simply read them as structure.

// Output schema names. The mock dispatches on these.
const (
	SchemaDecomposition  = "decomposition"   // nexus: mission -> domains, sub-tasks, aspects
	SchemaSealedCriteria = "sealed_criteria" // seal author: mission + decomposition -> criteria
	SchemaShardPlan      = "shard_plan"      // commander: capsule -> shards for children
	SchemaMicroBriefs    = "micro_briefs"    // squad lead: shard -> micro-briefs for workers
	SchemaAtom           = "atom"            // worker: brief -> result atom
	SchemaBundle         = "bundle"          // commander: capsule + atoms -> bundle
	SchemaVerdicts       = "verdicts"        // judge: criteria + bundle -> verdicts
	SchemaReview         = "review"          // reviewer: bundles -> score cards
	SchemaSynthesis      = "synthesis"       // synthesizer: passed bundles -> action report parts
)

// Text markers.
const (
	// MissionOpen and MissionClose delimit the mission text.
	MissionOpen  = "<mission>"
	MissionClose = "</mission>"
	// BriefOpen and BriefClose delimit an agent's brief (a capsule or shard).
	BriefOpen  = "<brief>"
	BriefClose = "</brief>"
	// AspectsPrefix starts a line listing, separated by "; ", the terms a
	// deliverable must cover: "Aspects: token rotation; session store".
	AspectsPrefix = "Aspects: "
	// DomainsPrefix starts a line listing domains: "Domains: architecture, testing".
	DomainsPrefix = "Domains: "
	// CountPrefix starts a line giving how many items to produce: "Count: 8".
	CountPrefix = "Count: "
	// CategoriesPrefix starts a line listing criterion categories.
	CategoriesPrefix = "Categories: "
	// CriterionPrefix starts one sealed criterion line given to the judge:
	// "Criterion sc-01 | security | <assertion> | expected: <expected>".
	CriterionPrefix = "Criterion "
	// UntrustedOpen/UntrustedClose delimit untrusted data (a bundle under
	// judgement or review). The full markers are
	// "<<<UNTRUSTED id=X>>>" and "<<<END UNTRUSTED id=X>>>", where X is a
	// nonce that does not occur in the data, so the data cannot close it.
	UntrustedOpen  = "<<<UNTRUSTED id="
	UntrustedClose = "<<<END UNTRUSTED id="
	// FeedbackHeading precedes hardening feedback, one "- [sc-ID] message"
	// line per failed criterion. Nothing else about the criteria is shown.
	FeedbackHeading = "## Hardening feedback"
)
