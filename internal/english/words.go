package english

// Words are the caller's words: how a user changes, in the caller's terms
// (the CLI: its flags and command lines), what a message of an engine
// points at. An engine names no flag (internal/cli's
// TestEnginesNameNoFlags); it takes these from its options
// (model.Config.Words, diagnosis.Options.Words, bundle.Options.Words),
// and leaves an empty word out of the sentence.
type Words struct {
	// APIServers pins the instances (model.Config.APIServers).
	APIServers string
	// Interval sets the time between samples (model.Config.Interval).
	Interval string
	// RequestTimeout sets the deadline of each request
	// (model.Config.RequestTimeout).
	RequestTimeout string
	// MaxPause, Evidence and TraceBudget set model.Config.MaxPause,
	// model.Config.Trace.Evidence and model.Config.Trace.Budget.
	MaxPause, Evidence, TraceBudget string
	// Force lets a run take a debug=2 dump where the evidence chosen
	// would not (model.Config.Force).
	Force string
	// Resample takes the samples of a live diagnosis further apart than
	// three minutes.
	Resample string
	// CapturedAt gives the capture time of a capture without
	// captured-at.txt (bundle.Options.CapturedAt).
	CapturedAt string
	// MaxDumpSize raises the bound of a debug=2 dump read from a file
	// (bundle.Options.MaxDumpBytes).
	MaxDumpSize string
}

// Paren returns " (word)", or "" for no word: a word of Words after the
// setting it changes.
func Paren(word string) string {
	if word == "" {
		return ""
	}
	return " (" + word + ")"
}
