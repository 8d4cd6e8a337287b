package core

// Sheaf's own objects live under the vault's .sheaf/ prefix; some are
// about notes (a lease on a directive, a proposal to write some), and a
// caller's view shows those only when it may see the notes.
const (
	// ProposalDir holds the proposals of propose-only callers.
	ProposalDir = ".sheaf/proposals/"
	// leaseDir holds the workers' leases on directives (leases.go).
	leaseDir = ".sheaf/leases"
	// directiveStatePath holds the revision of the vault's pending
	// directives; a caller's view keeps its own (see scopedStore).
	directiveStatePath = ".sheaf/directives/state.json"
	// maxProposalBytes bounds one proposal (its arguments carry the new
	// text of the notes it writes), the largest of the own objects.
	maxProposalBytes = 4 << 20
)

// MaxProposalBytes bounds one proposal.
const MaxProposalBytes = maxProposalBytes
