package hostile

// pathPrecedenceEntries are the issue-48 cases of their topic.
func pathPrecedenceEntries() []entry {
	return nil
}
