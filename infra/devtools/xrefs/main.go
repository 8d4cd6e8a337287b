// Command xrefs lists, for a set of files of one package, the identifiers
// declared in them that the package's other files use (in), and those they
// use from the other files (out): what moving the files to another package
// would have to export or take along. A development tool, not shipped:
//
//	go run ./infra/devtools/xrefs ./shared/tools errors.go coverage.go
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
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: xrefs PACKAGE FILE...")
		os.Exit(2)
	}
	out, err := exec.Command("go", "list", "-export", "-deps", "-json", os.Args[1]).Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "go list:", err)
		os.Exit(1)
	}
	exports := map[string]string{}
	var target listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			panic(err)
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly {
			target = p
		}
	}
	moving := map[string]bool{}
	for _, f := range os.Args[2:] {
		moving[f] = true
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range target.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(target.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			panic(err)
		}
		files = append(files, f)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) { return os.Open(exports[path]) })
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	pkg, err := (&types.Config{Importer: imp}).Check(target.ImportPath, fset, files, info)
	if err != nil {
		panic(err)
	}
	fileOf := func(pos token.Pos) string { return filepath.Base(fset.Position(pos).Filename) }
	in, outs := map[string]map[string]bool{}, map[string]map[string]bool{}
	name := func(obj types.Object) string {
		if f, ok := obj.(*types.Func); ok {
			if recv := f.Signature().Recv(); recv != nil {
				return types.TypeString(recv.Type(), func(*types.Package) string { return "" }) + "." + f.Name()
			}
		}
		if v, ok := obj.(*types.Var); ok && v.IsField() {
			return "field " + v.Name()
		}
		return obj.Name()
	}
	add := func(from string, obj types.Object) {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			return
		}
		if obj.Parent() != nil && obj.Parent() != pkg.Scope() {
			return // a local
		}
		to := fileOf(obj.Pos())
		if moving[to] == moving[from] {
			return
		}
		m := in
		if moving[from] {
			m = outs
		}
		n := name(obj) + " (" + to + ")"
		if m[n] == nil {
			m[n] = map[string]bool{}
		}
		m[n][from] = true
	}
	for id, obj := range info.Uses {
		add(fileOf(id.Pos()), obj)
	}
	for sel, s := range info.Selections {
		add(fileOf(sel.Pos()), s.Obj())
	}
	show := func(title string, m map[string]map[string]bool) {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		fmt.Printf("%s (%d):\n", title, len(ks))
		for _, k := range ks {
			var fs []string
			for f := range m[k] {
				fs = append(fs, f)
			}
			sort.Strings(fs)
			fmt.Printf("  %s  <- %s\n", k, strings.Join(fs, " "))
		}
	}
	show("used by the other files", in)
	show("used from the other files", outs)
}
