package main

import "testing"

// TestRootForServe: the tree `sheaf serve` runs (serve alone) declares the
// same serve command, flags and help as the full tree.
func TestRootForServe(t *testing.T) {
	fast, _, err := rootFor([]string{"serve", "--vault", "x"}).Find([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	full, _, err := rootCmd().Find([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	if fast.Name() != "serve" || fast.UsageString() != full.UsageString() || fast.Long != full.Long {
		t.Errorf("serve differs:\n%s\n---\n%s", fast.UsageString(), full.UsageString())
	}
	if fast.Flags().FlagUsages() != full.Flags().FlagUsages() {
		t.Error("serve's flags differ from the full tree's")
	}
	if n := len(rootFor(nil).Commands()); n < 10 {
		t.Errorf("rootFor(nil) has %d subcommands: want the full tree", n)
	}
	if n := len(rootFor([]string{"search"}).Commands()); n < 10 {
		t.Errorf("rootFor(search) has %d subcommands: want the full tree", n)
	}
}
