package economy

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Identity errors.
var (
	ErrIdentityExists = errors.New("agent already has an identity")
	ErrEntityFull     = errors.New("entity already has its maximum number of identities")
	ErrPoPRequired    = errors.New("proof of personhood required")
)

// Credential claim types the issuer knows.
const (
	ClaimReputation = "reputation_history"
	ClaimAudit      = "audit_pass"
)

// Credential is a verifiable credential. The issuer and the identity share
// the same *Credential, so a revocation changes the trust score.
type Credential struct {
	ID           string
	Issuer       string
	Subject      string
	ClaimType    string
	ClaimValue   map[string]float64
	IssuedEpoch  int
	ExpiresEpoch *int // nil: never expires
	Revoked      bool
}

// Valid reports whether the credential counts at epoch: not revoked and
// epoch < expiry (exclusive). IssuedEpoch is not checked, as in the
// reference: a credential dated in the future already counts.
func (c *Credential) Valid(epoch int) bool {
	return !c.Revoked && (c.ExpiresEpoch == nil || epoch < *c.ExpiresEpoch)
}

// Identity is one agent's identity.
type Identity struct {
	Agent             string
	CreationEpoch     int
	Credentials       []*Credential
	ProofOfPersonhood bool
	// Trust is the last computed trust score (it may be stale).
	Trust float64
}

// TrustScore is min(1, 0.3 + 0.2·PoP + min(0.5, 0.1·valid credentials)) at
// epoch; it is stored on the identity.
func (id *Identity) TrustScore(epoch int) float64 {
	n := 0
	for _, c := range id.Credentials {
		if c.Valid(epoch) {
			n++
		}
	}
	pop := 0.0
	if id.ProofOfPersonhood {
		pop = 1
	}
	id.Trust = min(1, 0.3+0.2*pop+min(0.5, 0.1*float64(n)))
	return id.Trust
}

// Credential returns the first valid credential of claimType at epoch.
func (id *Identity) Credential(claimType string, epoch int) (*Credential, bool) {
	for _, c := range id.Credentials {
		if c.ClaimType == claimType && c.Valid(epoch) {
			return c, true
		}
	}
	return nil, false
}

// IdentityConfig configures the registry.
type IdentityConfig struct {
	ProofOfPersonhoodRequired bool
	CredentialExpiryEpochs    int  // ≥ 1 (50)
	SybilDetectionEnabled     bool // (true)
	MaxIdentitiesPerEntity    int  // ≥ 1 (1)
	// BehavioralSimilarityThreshold in [0, 1] (0.8).
	BehavioralSimilarityThreshold float64
}

// DefaultIdentityConfig is the reference's default (its identity creation
// cost is recorded but never charged, and is absent here).
func DefaultIdentityConfig() IdentityConfig {
	return IdentityConfig{CredentialExpiryEpochs: 50, SybilDetectionEnabled: true, MaxIdentitiesPerEntity: 1, BehavioralSimilarityThreshold: 0.8}
}

// Validate checks the configuration.
func (c IdentityConfig) Validate() error {
	switch {
	case c.CredentialExpiryEpochs < 1:
		return fmt.Errorf("%w: credential_expiry_epochs = %d, want ≥ 1", ErrInvalidConfig, c.CredentialExpiryEpochs)
	case c.MaxIdentitiesPerEntity < 1:
		return fmt.Errorf("%w: max_identities_per_entity = %d, want ≥ 1", ErrInvalidConfig, c.MaxIdentitiesPerEntity)
	case !(c.BehavioralSimilarityThreshold >= 0 && c.BehavioralSimilarityThreshold <= 1):
		return fmt.Errorf("%w: behavioral_similarity_threshold = %v, want in [0, 1]", ErrInvalidConfig, c.BehavioralSimilarityThreshold)
	}
	return nil
}

// Registry holds identities, the entities behind them and the credentials
// it issued. Credential IDs are "cred-1", "cred-2", … in issue order.
type Registry struct {
	cfg         IdentityConfig
	identities  []*Identity
	byAgent     map[string]*Identity
	entities    map[string][]string
	credentials map[string]*Credential
	issued      int
}

// NewRegistry returns an empty registry.
func NewRegistry(cfg IdentityConfig) (*Registry, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Registry{cfg: cfg, byAgent: map[string]*Identity{}, entities: map[string][]string{}, credentials: map[string]*Credential{}}, nil
}

// CreateIdentity creates agent's identity at epoch, in the reference's
// order: an existing identity fails; a full entity fails, else the agent
// takes an entity slot now; a missing required PoP fails (and the entity
// slot stays taken, as in the reference); then the trust is computed.
func (r *Registry) CreateIdentity(agent, entity string, pop bool, epoch int) (*Identity, error) {
	if _, ok := r.byAgent[agent]; ok {
		return nil, ErrIdentityExists
	}
	if entity != "" {
		if len(r.entities[entity]) >= r.cfg.MaxIdentitiesPerEntity {
			return nil, ErrEntityFull
		}
		if !slices.Contains(r.entities[entity], agent) {
			r.entities[entity] = append(r.entities[entity], agent)
		}
	}
	if r.cfg.ProofOfPersonhoodRequired && !pop {
		return nil, ErrPoPRequired
	}
	id := &Identity{Agent: agent, CreationEpoch: epoch, ProofOfPersonhood: pop}
	id.TrustScore(epoch)
	r.identities = append(r.identities, id)
	r.byAgent[agent] = id
	return id, nil
}

// Identity returns agent's identity.
func (r *Registry) Identity(agent string) (*Identity, bool) {
	id, ok := r.byAgent[agent]
	return id, ok
}

// Issue gives subject a credential issued at epoch and expiring at epoch +
// CredentialExpiryEpochs. The subject needs an identity.
func (r *Registry) Issue(subject, claimType string, value map[string]float64, epoch int, issuer string) (*Credential, error) {
	id, ok := r.byAgent[subject]
	if !ok {
		return nil, fmt.Errorf("issue to %q: no identity", subject)
	}
	if issuer == "" {
		issuer = "system"
	}
	r.issued++
	exp := epoch + r.cfg.CredentialExpiryEpochs
	c := &Credential{ID: fmt.Sprintf("cred-%d", r.issued), Issuer: issuer, Subject: subject, ClaimType: claimType,
		ClaimValue: value, IssuedEpoch: epoch, ExpiresEpoch: &exp}
	r.credentials[c.ID] = c
	id.Credentials = append(id.Credentials, c)
	return c, nil
}

// IssueReputation issues a "reputation_history" credential {reputation, epoch}.
func (r *Registry) IssueReputation(subject string, reputation float64, epoch int) (*Credential, error) {
	return r.Issue(subject, ClaimReputation, map[string]float64{"reputation": reputation, "epoch": float64(epoch)}, epoch, "")
}

// IssueAudit issues an "audit_pass" credential {epoch}.
func (r *Registry) IssueAudit(subject string, epoch int) (*Credential, error) {
	return r.Issue(subject, ClaimAudit, map[string]float64{"epoch": float64(epoch)}, epoch, "")
}

// Verify reports whether the credential is known and valid at epoch.
func (r *Registry) Verify(credID string, epoch int) bool {
	c, ok := r.credentials[credID]
	return ok && c.Valid(epoch)
}

// Revoke revokes a credential; false for an unknown ID.
func (r *Registry) Revoke(credID string) bool {
	c, ok := r.credentials[credID]
	if ok {
		c.Revoked = true
	}
	return ok
}

// PoPVerificationRate is the share of identities with proof of personhood;
// ok is false with no identities (the reference returns 0).
func (r *Registry) PoPVerificationRate() (float64, bool) {
	if len(r.identities) == 0 {
		return 0, false
	}
	n := 0
	for _, id := range r.identities {
		if id.ProofOfPersonhood {
			n++
		}
	}
	return float64(n) / float64(len(r.identities)), true
}

// TrustDistribution returns every identity's stored trust score, by agent.
func (r *Registry) TrustDistribution() map[string]float64 {
	out := make(map[string]float64, len(r.identities))
	for _, id := range r.identities {
		out[id.Agent] = id.Trust
	}
	return out
}

// DetectSybils clusters the given interaction patterns with the registry's
// threshold ([] when detection is disabled).
func (r *Registry) DetectSybils(p *Patterns) [][]string {
	if !r.cfg.SybilDetectionEnabled {
		return nil
	}
	return Cluster(p, r.cfg.BehavioralSimilarityThreshold)
}

// Patterns are per-agent counterparty counts in insertion order.
type Patterns struct {
	agents []string
	counts map[string]map[string]float64 // agent → counterparty → count
}

// NewPatterns returns empty patterns.
func NewPatterns() *Patterns { return &Patterns{counts: map[string]map[string]float64{}} }

// Add counts n interactions of agent with counterparty (one direction).
func (p *Patterns) Add(agent, counterparty string, n float64) {
	pt, ok := p.counts[agent]
	if !ok {
		pt = map[string]float64{}
		p.counts[agent] = pt
		p.agents = append(p.agents, agent)
	}
	pt[counterparty] += n
}

// Agents returns the agents in insertion order.
func (p *Patterns) Agents() []string { return slices.Clone(p.agents) }

// Counts returns a copy of agent's counterparty counts.
func (p *Patterns) Counts(agent string) map[string]float64 {
	out := map[string]float64{}
	maps.Copy(out, p.counts[agent])
	return out
}

// Similarity is the reference's behavioural similarity of two
// counterparty→count maps: the Jaccard index J of their key sets, averaged
// with the dot product of the two vectors L1-normalised over the shared
// keys when there are shared keys with positive totals. It is not cosine
// similarity: identical uniform patterns over k counterparties score
// (1 + 1/k)/2.
func Similarity(a, b map[string]float64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	var shared []string
	for k := range a {
		if _, ok := b[k]; ok {
			shared = append(shared, k)
		}
	}
	slices.Sort(shared)
	union := len(a) + len(b) - len(shared)
	j := float64(len(shared)) / float64(union)
	if len(shared) == 0 {
		return j
	}
	var sa, sb float64
	for _, k := range shared {
		sa += a[k]
		sb += b[k]
	}
	if !(sa > 0 && sb > 0) {
		return j
	}
	d := 0.0
	for _, k := range shared {
		d += (a[k] / sa) * (b[k] / sb)
	}
	return (j + d) / 2
}

// Cluster is the reference's greedy, non-transitive clustering: each
// unvisited agent a, in insertion order, forms {a} ∪ {later unvisited b :
// sim(a, b) ≥ threshold}; clusters of one are dropped.
func Cluster(p *Patterns, threshold float64) [][]string {
	visited := map[string]bool{}
	var out [][]string
	for i, a := range p.agents {
		if visited[a] {
			continue
		}
		c := []string{a}
		for _, b := range p.agents[i+1:] {
			if !visited[b] && Similarity(p.counts[a], p.counts[b]) >= threshold {
				c = append(c, b)
			}
		}
		if len(c) > 1 {
			for _, x := range c {
				visited[x] = true
			}
			out = append(out, c)
		}
	}
	return out
}
