package golden

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRunComparesEveryCase(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a.in.yaml", "count: 1\n")
	write("a.out.yaml", "count: 2\n")
	write("b.in.yaml", "count: 5\n")
	write("b.out.yaml", "count: 6\n")
	double := func(t *testing.T, in []byte) any {
		var v struct {
			N int `json:"count"`
		}
		Decode(t, in, &v)
		v.N++
		return v
	}
	Run(t, dir, 2, double)
	if got := Cases(t, dir); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("cases = %v, want [a b]", got)
	}
}

func TestDiffersFindsADifference(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.out.yaml")
	if err := os.WriteFile(path, []byte("count: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if msg := Differs(path, []byte("count: 1\n")); msg != "" {
		t.Errorf("the same answer differs: %s", msg)
	}
	if Differs(path, []byte("count: 2\n")) == "" {
		t.Error("two different answers do not differ")
	}
	if Differs(path+".missing", nil) == "" {
		t.Error("a missing golden file is not reported")
	}
}
