package hostile

// accessOwnershipEntries are the issue-48 cases of their topic.
func accessOwnershipEntries() []entry {
	return nil
}
