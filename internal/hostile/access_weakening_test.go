package hostile

// accessWeakeningEntries are the issue-48 cases of their topic.
func accessWeakeningEntries() []entry {
	return nil
}
