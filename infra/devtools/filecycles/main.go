// Command filecycles measures how tangled a Go package's files are: file A
// references file B when A uses an identifier (a function, type, method,
// field, variable or constant) declared in B. It prints, for each package,
// its production files, lines, exported names (top-level names and the
// exported methods of every named type), the size of the largest strongly
// connected component of that graph (the largest set of files that all
// reach each other) and, largest first, the files of every component of
// more than one file. A development tool, not shipped:
//
//	go run ./infra/devtools/filecycles ./shared/tools ./shared/core
//
// Test files are left out. The packages' dependencies are read from the
// compiler's export data (go list -export), so only go itself is needed.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
	DepOnly    bool
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: filecycles PACKAGE...")
		os.Exit(2)
	}
	ms, err := measure(os.Args[1:]...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, m := range ms {
		fmt.Printf("%s: %d files, %d lines, %d exported names (top-level names and exported methods), largest cycle %d files\n",
			m.Path, m.Files, m.Lines, m.Exported, len(m.Largest()))
		for _, c := range m.Cycles {
			fmt.Printf("  %s\n", strings.Join(c, " "))
		}
	}
}

// measured is one package's figures.
type measured struct {
	Path                   string
	Files, Lines, Exported int
	Cycles                 [][]string // the components of more than one file, largest first, each sorted
}

// Largest is the largest cycle's files (none when no files reach each other).
func (m measured) Largest() []string {
	if len(m.Cycles) == 0 {
		return nil
	}
	return m.Cycles[0]
}

// measure measures the packages the patterns name.
func measure(patterns ...string) ([]measured, error) {
	args := append([]string{"list", "-export", "-deps", "-json"}, patterns...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	exports := map[string]string{}
	var targets []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly {
			targets = append(targets, p)
		}
	}
	var ms []measured
	for _, p := range targets {
		m, err := report(p, exports)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.ImportPath, err)
		}
		ms = append(ms, m)
	}
	return ms, nil
}

func report(p listed, exports map[string]string) (measured, error) {
	fset := token.NewFileSet()
	var files []*ast.File
	lines := 0
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return measured{}, err
		}
		files = append(files, f)
		lines += fset.File(f.Pos()).LineCount()
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		e := exports[path]
		if e == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(e)
	})
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	pkg, err := (&types.Config{Importer: imp}).Check(p.ImportPath, fset, files, info)
	if err != nil {
		return measured{}, err
	}
	exported := 0
	for _, name := range pkg.Scope().Names() {
		obj := pkg.Scope().Lookup(name)
		if obj.Exported() {
			exported++
		}
		if tn, ok := obj.(*types.TypeName); ok {
			if named, ok := tn.Type().(*types.Named); ok {
				for i := range named.NumMethods() {
					if m := named.Method(i); m.Exported() {
						exported++
					}
				}
			}
		}
	}
	fileOf := func(pos token.Pos) string { return filepath.Base(fset.Position(pos).Filename) }
	edges := map[string]map[string]bool{}
	add := func(from string, obj types.Object) {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			return
		}
		to := fileOf(obj.Pos())
		if to == from {
			return
		}
		if edges[from] == nil {
			edges[from] = map[string]bool{}
		}
		edges[from][to] = true
	}
	for id, obj := range info.Uses {
		add(fileOf(id.Pos()), obj)
	}
	for sel, s := range info.Selections {
		add(fileOf(sel.Pos()), s.Obj())
	}
	var names []string
	for _, f := range files {
		names = append(names, fileOf(f.Pos()))
	}
	return measured{Path: p.ImportPath, Files: len(files), Lines: lines, Exported: exported, Cycles: cycles(names, edges)}, nil
}

// cycles is Tarjan's algorithm; it returns the strongly connected
// components of more than one node, largest first, each sorted.
func cycles(nodes []string, edges map[string]map[string]bool) [][]string {
	index, low := map[string]int{}, map[string]int{}
	on := map[string]bool{}
	var stack []string
	var comps [][]string
	n := 0
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = n, n
		n++
		stack = append(stack, v)
		on[v] = true
		for w := range edges[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var comp []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			if len(comp) > 1 {
				sort.Strings(comp)
				comps = append(comps, comp)
			}
		}
	}
	sort.Strings(nodes)
	for _, v := range nodes {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	sort.SliceStable(comps, func(i, j int) bool { return len(comps[i]) > len(comps[j]) })
	return comps
}
