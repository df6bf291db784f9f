package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// guideCommands are the shell commands of the ```sh blocks under the
// heading section (a whole line, e.g. "## With Helm") of the Markdown file
// at rel (from the repository root), up to the next heading of that level:
// what the guide tells a user to type, one argv a command, continuation
// lines joined and comments dropped. The guides' commands use no quoting,
// so a command splits on white space; one that needs more fails here
// rather than being run wrongly.
func guideCommands(t *testing.T, rel, section string) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(env.root, rel))
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := shellCommands(string(b), section)
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	if len(cmds) == 0 {
		t.Fatalf("%s: no commands under %q", rel, section)
	}
	return cmds
}

func shellCommands(doc, section string) ([][]string, error) {
	level := section[:strings.IndexByte(section, ' ')+1]
	var cmds [][]string
	in, block, cont := false, false, ""
	for _, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !block && trimmed == section:
			in = true
			continue
		case !block && in && strings.HasPrefix(line, level):
			return cmds, nil
		case !in:
			continue
		case trimmed == "```sh" || trimmed == "```bash":
			block = true
			continue
		case block && trimmed == "```":
			block = false
			continue
		case !block || trimmed == "" || strings.HasPrefix(trimmed, "#"):
			continue
		}
		if i := strings.Index(trimmed, " #"); i >= 0 {
			trimmed = strings.TrimSpace(trimmed[:i])
		}
		if strings.HasSuffix(trimmed, `\`) {
			cont += strings.TrimSuffix(trimmed, `\`) + " "
			continue
		}
		full := cont + trimmed
		cont = ""
		if strings.ContainsAny(full, `"'$`+"`") {
			return nil, fmt.Errorf("command %q quotes or expands: run it by hand, not from here", full)
		}
		cmds = append(cmds, strings.Fields(full))
	}
	if !in {
		return nil, fmt.Errorf("no section %q", section)
	}
	return cmds, nil
}

func TestShellCommands(t *testing.T) {
	doc := "# Guide\n\n## With Helm\n\nText.\n\n```sh\nkubectl create namespace x\n# a comment\nhelm install a b \\\n  --namespace x   # trailing\n```\n\n```yaml\nkind: X\n```\n\n## Next\n\n```sh\nmake nothing\n```\n"
	got, err := shellCommands(doc, "## With Helm")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"kubectl", "create", "namespace", "x"}, {"helm", "install", "a", "b", "--namespace", "x"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("shellCommands: got %q, want %q", got, want)
	}
	if _, err := shellCommands(doc, "## Missing"); err == nil {
		t.Error("a missing section: no error")
	}
	if _, err := shellCommands("## S\n```sh\nkubectl patch x -p '{}'\n```\n", "## S"); err == nil {
		t.Error("a quoted command: no error")
	}
}
