package docs

import (
	"path"
	"regexp"
	"strings"
	"testing"
)

// maxFrontDoorLines is how long README.md may be (issue 38): what the
// product is, the two commands, a five-minute path and a link per feature;
// everything else lives in a guide under docs/.
const maxFrontDoorLines = 250

// The two commands README gives a newcomer, each at the start of a line of
// an sh block.
var (
	demoCommandRe = regexp.MustCompile(`(?m)^make demo\b`)
	testCommandRe = regexp.MustCompile(`(?m)^make test\b`)
)

// TestReadmeIsAFrontDoor holds README.md to issue 38: short, every guide
// under docs/ reachable from it by links, and the test command CI runs
// (.ci/run runs the command README gives) still `make test`.
func TestReadmeIsAFrontDoor(t *testing.T) {
	pages := readPages(t)
	readme := pages[0]
	if readme.Lines > maxFrontDoorLines {
		t.Errorf("README.md has %d lines, at most %d: move the detail into a guide under docs/", readme.Lines, maxFrontDoorLines)
	}

	byPath := map[string]Page{}
	for _, p := range pages {
		byPath[p.Path] = p
	}
	reached := map[string]bool{readme.Path: true}
	queue := []Page{readme}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, l := range p.Links {
			file, _, _ := strings.Cut(l.Target, "#")
			if file == "" || schemeRe.MatchString(file) {
				continue
			}
			target := path.Join(path.Dir(p.Path), file)
			if next, ok := byPath[target]; ok && !reached[target] {
				reached[target] = true
				queue = append(queue, next)
			}
		}
	}
	for _, p := range pages {
		if !reached[p.Path] {
			t.Errorf("%s is reached by no link from README.md", p.Path)
		}
	}

	commands := false
	for _, b := range readme.Blocks {
		if b.Lang == "sh" && demoCommandRe.MatchString(b.Body) && testCommandRe.MatchString(b.Body) {
			commands = true
		}
	}
	if !commands {
		t.Error("README.md has no sh block giving `make demo` and `make test`: CI runs the test command README gives")
	}
}
