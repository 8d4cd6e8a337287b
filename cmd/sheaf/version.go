package main

import "runtime/debug"

// A binary built without -X main.version (go install …@v0.2.0, go build)
// reports the module version Go recorded in it.
func init() {
	if version != "dev" {
		return
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		version = bi.Main.Version
	}
}
