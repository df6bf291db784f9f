package hostile

// originEntries are the issue-48 cases of their topic.
func originEntries() []entry {
	return nil
}
