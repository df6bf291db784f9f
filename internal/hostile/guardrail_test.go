package hostile

// guardrailEntries are the issue-48 cases of their topic.
func guardrailEntries() []entry {
	return nil
}
