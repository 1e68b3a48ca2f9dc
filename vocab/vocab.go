// Package vocab is the pipeline vocabulary shared by prompts, commanders,
// shadow, nexus and the mock provider: output schema names and the text
// markers prompts are laid out with. It imports nothing of ours.
//
// The mock provider must behave the same in-process and behind its
// OpenAI-compatible HTTP server, so it reads nothing but what a request
// carries: the output schema's name and the messages' text. Prompts therefore
// lay out the parts the mock (and a human reading a transcript) relies on with
// the markers below. Real models simply read them as structure.
package vocab

import "regexp"

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
	// UntrustedOpen starts, and UntrustedClose ends, a block of untrusted
	// data: every piece of model- or user-written text in a prompt (the
	// mission, a brief, the aspects, a worker's result, a bundle, hardening
	// feedback, the criteria shown to the judge). A block reads
	//
	//	<untrusted kind="atom" id="testing-01" nonce="1a2b3c4d5e6f">
	//	...the data...
	//	</untrusted kind="atom" nonce="1a2b3c4d5e6f">
	//
	// Each marker stands alone on its line. The nonce is derived from the
	// block (kind, id and data) and never occurs in the data, and the data
	// is escaped so that it contains neither marker (UntrustedEscape), so
	// nothing inside a block can close it or open another. The system prompt
	// tells the model that text inside such blocks is data, never
	// instructions. prompts.Untrusted writes blocks; prompts.SplitUntrusted
	// reads them back.
	UntrustedOpen  = "<untrusted "
	UntrustedClose = "</untrusted "
	// UntrustedTag is the element name, matched case-insensitively when
	// escaping data: "<" before it (after optional "/" and spaces) becomes
	// UntrustedEscape.
	UntrustedTag    = "untrusted"
	UntrustedEscape = "&lt;"

	// AspectsPrefix starts the line introducing the aspects block: the terms
	// a deliverable must cover, separated by AspectsSep
	// ("token rotation; session store").
	AspectsPrefix = "Aspects: "
	AspectsSep    = "; "
	// DomainsPrefix starts a line listing domains: "Domains: architecture, testing".
	DomainsPrefix = "Domains: "
	// CountPrefix starts a line giving how many items to produce: "Count: 8".
	CountPrefix = "Count: "
	// CategoriesPrefix starts a line listing criterion categories.
	CategoriesPrefix = "Categories: "
	// CriterionPrefix starts one sealed criterion line given to the judge
	// (inside the criteria block):
	// "Criterion sc-01 | security | <assertion> | expected: <expected>".
	CriterionPrefix = "Criterion "
	// FeedbackHeading precedes hardening feedback, one "- [sc-ID] message"
	// line per failed criterion. Nothing else about the criteria is shown.
	FeedbackHeading = "## Hardening feedback"
	// FeedbackItemPrefix starts one feedback line: "- [sc-03] message".
	FeedbackItemPrefix = "- ["
	// BundleIDPrefix starts the line naming a bundle shown to a reviewer or
	// the synthesizer ("Bundle: testing"); the block's id says the same.
	BundleIDPrefix = "Bundle: "
	// DomainPrefix starts a capsule brief's line naming its domain
	// ("Your domain: testing.").
	DomainPrefix = "Your domain: "
	// BundleDomainPrefix starts the first line of a bundle's text
	// (commanders.Bundle.Text): "Domain: testing".
	BundleDomainPrefix = "Domain: "
	// FindingPrefix starts one finding line of a bundle's text:
	// "- [high/quick] title: detail" (priority/effort in the brackets).
	FindingPrefix = "- ["
	// EvidenceItemPrefix starts one citation line of an evidence block:
	// `- internal/auth/session.go:40-52 "quote"` (the lines "40" when one;
	// the quote JSON-encoded, so it stays on one line).
	EvidenceItemPrefix = "- "
	// LedgerTag opens every ledger mark: a line that code (never an agent)
	// writes into a bundle's text for the judge, saying what checking the
	// bundle's citations against the workspace found. Agent-written text
	// cannot contain it (prompts.EscapeLedger).
	LedgerTag = "[ledger]"
	// LedgerFinding starts the mark before each finding of a bundle with
	// a workspace: "[ledger] finding 2 of 4: unsupported (...)".
	LedgerFinding = LedgerTag + " finding "
	// LedgerSupported and LedgerUnsupported are a finding mark's verdict,
	// after "N of M: ".
	LedgerSupported   = "supported"
	LedgerUnsupported = "unsupported"
	// LedgerEnd closes the findings of a bundle with a workspace.
	LedgerEnd = LedgerTag + " end of findings"
)

// Kinds of untrusted blocks (the kind="..." attribute).
const (
	BlockMission       = "mission"         // the user's mission text
	BlockBrief         = "brief"           // a capsule's, shard's or micro-brief's text
	BlockAspects       = "aspects"         // the aspects to cover, separated by AspectsSep
	BlockFileScope     = "file_scope"      // paths an agent may touch
	BlockAtom          = "atom"            // one worker's result (id: its brief id)
	BlockBundle        = "bundle"          // a bundle under review, judgement or synthesis (id: bundle id)
	BlockPrevious      = "previous_bundle" // the commander's own bundle being revised
	BlockFeedback      = "feedback"        // hardening or quarantine feedback
	BlockCriteria      = "criteria"        // the sealed criteria shown to the judge, one CriterionPrefix line each
	BlockDecomposition = "decomposition"   // the Nexus's decomposition shown to the seal author
	BlockEvidence      = "evidence"        // a worker atom's citations shown to its commander (id: its brief id), one EvidenceItemPrefix line each
	BlockPreviousRun   = "previous_run"    // a follow-up's previous-run block shown to the Nexus decomposition
	BlockToolResult    = "tool_result"     // a read tool's answer shown to the judge or the seal author (id: the tool's name)
)

// ToolLimitNote starts the message that tells a model its tool turns are
// spent and it must answer now (commanders.WithTools). It is not the task:
// the mock reads the task from the user message before it.
const ToolLimitNote = "Limit reached: no more tool calls"

// protocolWords finds words that name the sealed-criteria protocol: a
// seal, sealed criteria, the Shadow Score, the envelope, the commitment
// hash.
var protocolWords = regexp.MustCompile(`(?i)seal|shadow\s*score|criteri|envelope|commitment\s*hash`)

// NamesProtocol reports whether text names the sealed-criteria protocol
// (protocolWords). Text an agent wrote that does (a finding title echoing
// feedback, say) is withheld from what commanders, squad leads and workers
// are shown: none of them may learn that the protocol exists.
func NamesProtocol(text string) bool { return protocolWords.MatchString(text) }
