package roofline

// PhaseRequestError is a PhaseRequest field out of its range: Key names
// the field as its YAML/JSON key ("prompt", "ubatch_tokens"), Err says why.
// Callers that show the field under another name (a command-line flag)
// find it with errors.As instead of reading the message.
type PhaseRequestError struct {
	Key string
	Err error
}

func (e *PhaseRequestError) Error() string { return e.Key + ": " + e.Err.Error() }

func (e *PhaseRequestError) Unwrap() error { return e.Err }
