package docs

import (
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// root is the repository root; go test runs in the package's folder.
const root = "../.."

func TestAnchor(t *testing.T) {
	for _, tc := range []struct{ heading, want string }{
		{"Quickstart", "quickstart"},
		{"Services without an Ingress", "services-without-an-ingress"},
		{"CloudflareTunnel health", "cloudflaretunnel-health"},
		{"A quiet and small provider (issue 21)", "a-quiet-and-small-provider-issue-21"},
		{"`make test` and `make demo`", "make-test-and-make-demo"},
		{"Install, upgrade & uninstall", "install-upgrade--uninstall"},
		{"Gateway API — the listener's hostnames", "gateway-api--the-listeners-hostnames"},
		{"[Linked](other.md#x) heading", "linked-heading"},
		{"Keeps_underscores and-hyphens", "keeps_underscores-and-hyphens"},
		{"**Bold** and *emphasis*", "bold-and-emphasis"},
		{"Ünïcode letters stay", "ünïcode-letters-stay"},
		{"1,000 Ingresses: 5.2 s", "1000-ingresses-52-s"},
		{"<a id=\"x\"></a>Tagged", "tagged"},
	} {
		if got := Anchor(tc.heading); got != tc.want {
			t.Errorf("Anchor(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
}

func TestParse(t *testing.T) {
	const page = "# Title\n" +
		"See [a guide](docs/a.md#part) and `[not a link](x.md)`.\n" +
		"## Title\n" +
		"```yaml\n" +
		"kind: A\n" +
		"# [not a link](y.md)\n" +
		"```\n" +
		"- item\n" +
		"  ```yaml fragment\n" +
		"  spec: {}\n" +
		"  ```\n" +
		"![image](pic.png \"a title\") [angle](<a b.md>)\n" +
		"~~~sh\n" +
		"```\n" +
		"~~~\n"
	p := Parse("p.md", page)
	wantBlocks := []Block{
		{Line: 4, Lang: "yaml", Flags: []string{}, Body: "kind: A\n# [not a link](y.md)\n"},
		{Line: 9, Lang: "yaml", Flags: []string{"fragment"}, Body: "spec: {}\n"},
		{Line: 13, Lang: "sh", Flags: []string{}, Body: "```\n"},
	}
	if !reflect.DeepEqual(p.Blocks, wantBlocks) {
		t.Errorf("blocks:\n got %#v\nwant %#v", p.Blocks, wantBlocks)
	}
	if p.Blocks[0].Fragment() || !p.Blocks[1].Fragment() {
		t.Errorf("Fragment() = %v, %v; want false, true", p.Blocks[0].Fragment(), p.Blocks[1].Fragment())
	}
	wantLinks := []Link{{2, "docs/a.md#part"}, {12, "pic.png"}, {12, "a b.md"}}
	if !reflect.DeepEqual(p.Links, wantLinks) {
		t.Errorf("links:\n got %v\nwant %v", p.Links, wantLinks)
	}
	wantAnchors := map[string]bool{"title": true, "title-1": true}
	if !reflect.DeepEqual(p.Anchors, wantAnchors) {
		t.Errorf("anchors: got %v, want %v", p.Anchors, wantAnchors)
	}
	if p.Lines != 15 {
		t.Errorf("lines: got %d, want 15", p.Lines)
	}
}

var schemeRe = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

// TestNoDeadLinks follows every relative link of README.md and docs/*.md:
// the file or folder it names must exist in the repository, and an
// #anchor must be one a heading of the target page produces. External
// links (http:, https:, mailto:) are not fetched.
func TestNoDeadLinks(t *testing.T) {
	pages := readPages(t)
	parsed := map[string]Page{}
	for _, p := range pages {
		parsed[p.Path] = p
	}
	anchorsOf := func(target string) (map[string]bool, error) {
		if p, ok := parsed[target]; ok {
			return p.Anchors, nil
		}
		p, err := Read(root, target)
		if err != nil {
			return nil, err
		}
		parsed[target] = p
		return p.Anchors, nil
	}

	checked := 0
	for _, p := range pages {
		for _, l := range p.Links {
			if schemeRe.MatchString(l.Target) {
				continue
			}
			checked++
			file, anchor, _ := strings.Cut(l.Target, "#")
			target := p.Path
			switch {
			case strings.HasPrefix(file, "/"): // GitHub: the repository root
				target = path.Clean(strings.TrimPrefix(file, "/"))
			case file != "":
				target = path.Join(path.Dir(p.Path), file)
			}
			if target == ".." || strings.HasPrefix(target, "../") {
				t.Errorf("%s:%d: %s leaves the repository", p.Path, l.Line, l.Target)
				continue
			}
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
				t.Errorf("%s:%d: %s: no such file or folder %s", p.Path, l.Line, l.Target, target)
				continue
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				t.Errorf("%s:%d: %s: an anchor into %s, which is not Markdown", p.Path, l.Line, l.Target, target)
				continue
			}
			anchors, err := anchorsOf(target)
			if err != nil {
				t.Errorf("%s:%d: %s: %v", p.Path, l.Line, l.Target, err)
				continue
			}
			if !anchors[anchor] {
				t.Errorf("%s:%d: %s: no heading of %s produces #%s", p.Path, l.Line, l.Target, target, anchor)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the parser is broken")
	}
}

func readPages(t *testing.T) []Page {
	t.Helper()
	paths, err := Pages(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 2 {
		t.Fatalf("found only %v: want README.md and docs/*.md", paths)
	}
	var out []Page
	for _, p := range paths {
		page, err := Read(root, p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page)
	}
	return out
}
