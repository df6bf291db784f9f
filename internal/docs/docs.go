// Package docs reads the project's Markdown documentation — README.md and
// docs/*.md — the way its tests check it: the fenced code blocks a user
// copies, the links between pages, and the anchors GitHub gives headings.
// It is a reader for tests (internal/docs's own link test, the dry run of
// every YAML block in internal/install), not part of the provider.
package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// FragmentFlag, a second word in a YAML block's info string (```yaml
// fragment), marks a block that is deliberately not a whole Kubernetes
// object — a values file, a few annotations, a patch — so the dry run of
// the documentation's YAML skips it.
const FragmentFlag = "fragment"

// Block is one fenced code block.
type Block struct {
	Line  int      // of the opening fence, from 1
	Lang  string   // the info string's first word: "yaml", "sh", or ""
	Flags []string // the info string's other words
	Body  string   // the lines between the fences, their fence indentation removed
}

// Fragment says whether the block is marked as deliberately partial.
func (b Block) Fragment() bool { return slices.Contains(b.Flags, FragmentFlag) }

// Link is one inline Markdown link or image, [text](target).
type Link struct {
	Line   int
	Target string
}

// Page is one parsed Markdown file.
type Page struct {
	Path    string // relative to the repository root, with '/'
	Blocks  []Block
	Links   []Link
	Anchors map[string]bool // every anchor its headings produce
	Lines   int
}

// Pages lists the documentation the tests check: README.md and every
// docs/*.md, relative to root.
func Pages(root string) ([]string, error) {
	guides, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	out := []string{"README.md"}
	for _, g := range guides {
		rel, err := filepath.Rel(root, g)
		if err != nil {
			return nil, err
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out, nil
}

// Read parses the page at path (relative to root).
func Read(root, path string) (Page, error) {
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
	if err != nil {
		return Page{}, err
	}
	return Parse(path, string(b)), nil
}

var (
	fenceRe   = regexp.MustCompile("^( *)(`{3,}|~{3,})\\s*(.*)$")
	headingRe = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)(\s+#+)?\s*$`)
	// [text](target) or [text](target "title"); the text may not hold
	// brackets, which the documentation's link texts do not need.
	linkRe     = regexp.MustCompile(`\]\((<[^>]*>|[^()\s]+)(\s+"[^"]*")?\)`)
	codeSpanRe = regexp.MustCompile("(`+)[^`]+?(`+)")
)

// Parse reads one Markdown page: its fenced code blocks, the links outside
// them and inline code, and the anchors of its ATX headings ("## Title").
func Parse(path, content string) Page {
	p := Page{Path: path, Anchors: map[string]bool{}}
	lines := strings.Split(content, "\n")
	p.Lines = len(lines)
	if p.Lines > 0 && lines[p.Lines-1] == "" {
		p.Lines-- // the newline ending the last line starts no line
	}
	seen := map[string]int{}
	var open *Block
	var fence, indent string
	var body []string
	for i, line := range lines {
		n := i + 1
		if open != nil {
			if m := fenceRe.FindStringSubmatch(line); m != nil && m[3] == "" &&
				m[2][0] == fence[0] && len(m[2]) >= len(fence) {
				open.Body = strings.Join(body, "\n")
				if len(body) > 0 {
					open.Body += "\n"
				}
				p.Blocks = append(p.Blocks, *open)
				open, body = nil, nil
				continue
			}
			body = append(body, strings.TrimPrefix(line, indent))
			continue
		}
		if m := fenceRe.FindStringSubmatch(line); m != nil {
			words := strings.Fields(m[3])
			b := &Block{Line: n}
			if len(words) > 0 {
				b.Lang, b.Flags = words[0], words[1:]
			}
			open, fence, indent = b, m[2], m[1]
			continue
		}
		if m := headingRe.FindStringSubmatch(line); m != nil {
			a := Anchor(m[2])
			// GitHub numbers a repeated anchor: x, x-1, x-2.
			if k := seen[a]; k > 0 {
				seen[a]++
				a = fmt.Sprintf("%s-%d", a, k)
			} else {
				seen[a] = 1
			}
			p.Anchors[a] = true
		}
		for _, m := range linkRe.FindAllStringSubmatch(codeSpanRe.ReplaceAllString(line, ""), -1) {
			p.Links = append(p.Links, Link{Line: n, Target: strings.Trim(m[1], "<>")})
		}
	}
	if open != nil { // an unclosed fence runs to the end, as on GitHub
		open.Body = strings.Join(body, "\n")
		p.Blocks = append(p.Blocks, *open)
	}
	return p
}

var (
	inlineLinkRe = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTagRe    = regexp.MustCompile(`<[^>]+>`)
)

// Anchor is the anchor GitHub gives a heading: its text as rendered (link
// targets and HTML tags dropped), lower case, every character but letters,
// digits, '-', '_' and spaces dropped, and each space a '-'. A repeated
// anchor is numbered by Parse, not here.
func Anchor(heading string) string {
	text := inlineLinkRe.ReplaceAllString(heading, "$1")
	text = htmlTagRe.ReplaceAllString(text, "")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
