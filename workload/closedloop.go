package workload

// closedBudget counts a closed-loop client's requests against its num_requests. Every
// request the client will send draws from it once, when it is committed: the
// Concurrency initial requests when the generator is built, even though a ramp-up sends
// them later, and each follow-up (a new request or session, or a session's next turn)
// when its predecessor completes; a session whose next turn finds the budget spent
// ends there. A user's follow-ups can therefore never use up a share that
// a later-starting user has already been promised, and the client sends exactly
// num_requests however its users' starts and completions interleave.
type closedBudget struct {
	left int // requests still to commit; -1 when the client is bounded by a duration
}

// newClosedBudget returns the budget of closed-loop client c.
func newClosedBudget(c *Client) closedBudget {
	if c.NumRequests > 0 {
		return closedBudget{left: c.NumRequests}
	}
	return closedBudget{left: -1}
}

// take commits up to n requests and returns how many it granted (n when unbounded).
func (b *closedBudget) take(n int) int {
	if b.left < 0 {
		return n
	}
	n = min(n, b.left)
	b.left -= n
	return n
}
