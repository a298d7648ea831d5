package v1alpha1

// GroupAtLeast is the fewest findings alike that make a FindingGroup: two
// or three alike read well one by one, a relist storm (thousands of
// watches initializing at once after an API server restart) does not.
const GroupAtLeast = 5

// FindingGroup is a bucket of findings alike, as panicparse buckets
// goroutines with identical stacks: at least GroupAtLeast findings of one
// report that agree on every field below but their goroutines. The key
// fields are what the findings table shows of a finding, so a group is one
// row of the table with a COUNT.
//
// Its JSON shape: the key (type, severity, apiserver, client, verb, path,
// resource, phase, blockedMinutes, seats, goroutinesEach, match), then
// count and findings, the members' indices into Report.Findings in
// ascending order. Groups are listed in the order of their first member;
// a finding is in at most one group, and findings in none stand alone.
type FindingGroup struct {
	Type      FindingType `json:"type"`
	Severity  Severity    `json:"severity"`
	APIServer string      `json:"apiserver"`
	// Client is the members' Finding.ClientLabel.
	Client string `json:"client"`
	// Verb, Path and Resource are the members' Client's, empty when they
	// have none.
	Verb     string `json:"verb,omitempty"`
	Path     string `json:"path,omitempty"`
	Resource string `json:"resource,omitempty"`
	Phase    Phase  `json:"phase"`
	// BlockedMinutes is the members' Finding.BlockedMinutes; absent when
	// unknown.
	BlockedMinutes *int `json:"blockedMinutes,omitempty"`
	// Seats are the APF seats each member's request holds; absent when
	// unknown.
	Seats int `json:"seats,omitempty"`
	// GoroutinesEach is how many goroutines each member's watch keeps
	// alive (len(Finding.GoroutineIDs)).
	GoroutinesEach int   `json:"goroutinesEach"`
	Match          Match `json:"match,omitempty"`
	// Count is len(Findings).
	Count int `json:"count"`
	// Findings are the members' indices into Report.Findings, ascending.
	Findings []int `json:"findings"`
}
