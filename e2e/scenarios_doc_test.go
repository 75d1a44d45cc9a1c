package e2e

// This file has no build tag: go test ./... checks that docs/LAB.md's table of
// scenarios is the e2e suite's, without running the suite.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// scenario is a top-level container of the suite: its text and labels.
type scenario struct {
	name   string
	labels []string
}

// specScenarios reads the top-level Describe containers of scenarios_test.go.
func specScenarios(t *testing.T) []scenario {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "scenarios_test.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []scenario
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if len(vs.Values) != 1 {
				continue
			}
			call, ok := vs.Values[0].(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				continue
			}
			if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "Describe" {
				continue
			}
			var sc scenario
			sc.name = stringLit(t, call.Args[0])
			for _, arg := range call.Args[1:] {
				if l, ok := arg.(*ast.CallExpr); ok {
					if id, ok := l.Fun.(*ast.Ident); ok && id.Name == "Label" {
						for _, a := range l.Args {
							sc.labels = append(sc.labels, stringLit(t, a))
						}
					}
				}
			}
			out = append(out, sc)
		}
	}
	return out
}

func stringLit(t *testing.T, e ast.Expr) string {
	t.Helper()
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		t.Fatalf("a container's text or label is not a string literal: %T", e)
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// docScenarios reads docs/LAB.md's table of scenarios (| scenario | labels | a user observes |).
func docScenarios(t *testing.T) []scenario {
	t.Helper()
	b, err := os.ReadFile("../docs/LAB.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	start := slices.Index(lines, "| scenario | labels | a user observes |")
	if start < 0 {
		t.Fatal("docs/LAB.md has no table of scenarios")
	}
	var out []scenario
	for _, l := range lines[start+2:] {
		if !strings.HasPrefix(l, "|") {
			break
		}
		cells := strings.Split(strings.Trim(l, "|"), " | ")
		if len(cells) < 3 {
			t.Fatalf("docs/LAB.md: row %q has no description", l)
		}
		sc := scenario{name: strings.TrimSpace(cells[0])}
		for _, lab := range strings.Split(cells[1], ",") {
			sc.labels = append(sc.labels, strings.TrimSpace(lab))
		}
		out = append(out, sc)
	}
	return out
}

// TestScenarioTable: every top-level scenario of the suite is a row of docs/LAB.md's
// table, in the suite's order, with its text and labels, and the table has no other rows.
func TestScenarioTable(t *testing.T) {
	specs, docs := specScenarios(t), docScenarios(t)
	if len(specs) == 0 {
		t.Fatal("no scenarios found in scenarios_test.go")
	}
	for i := 0; i < max(len(specs), len(docs)); i++ {
		switch {
		case i >= len(docs):
			t.Errorf("docs/LAB.md lacks the scenario %q (labels %s)", specs[i].name, strings.Join(specs[i].labels, ", "))
		case i >= len(specs):
			t.Errorf("docs/LAB.md lists %q, which is not a scenario of the suite", docs[i].name)
		case docs[i].name != specs[i].name:
			t.Errorf("row %d of docs/LAB.md's table is %q; the suite's scenario there is %q", i+1, docs[i].name, specs[i].name)
		case !slices.Equal(docs[i].labels, specs[i].labels):
			t.Errorf("%q: docs/LAB.md gives labels %v, the suite %v", specs[i].name, docs[i].labels, specs[i].labels)
		}
	}
}
