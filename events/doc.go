// Package events is the vocabulary of a run's event stream: Event (one line
// of events.jsonl), Kind and its constants, Phase and the pipeline's phase
// order, one typed payload per kind (the *Data and PhaseNEnd types, each
// declaring the kind it belongs to), and Observer, which receives a run's
// events as they happen.
//
// Reading events.jsonl back needs nothing else: json.Unmarshal into an
// Event decodes its data into the kind's payload type, by a table built from
// the payload types' own declarations; data of a kind this version does not
// know is kept as RawData. The package does not import the engine (nexus).
package events
