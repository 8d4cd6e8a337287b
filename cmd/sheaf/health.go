package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sheaf-dev/sheaf/shared/core"
)

func healthCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "health --vault DIR",
		Short: "Print the vault's 0-100 health score and its components (refreshes the index first)",
		Args:  cobra.NoArgs,
	}
	cfg := withConfig(cmd)
	asJSON := cmd.Flags().Bool("json", false, "print the wiki_health tool's JSON result")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		l, s, err := indexed(cmd, cfg)
		if err != nil {
			return err
		}
		defer l.Close()
		h, err := s.WikiHealth(cmd.Context(), core.HealthIn{})
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(h)
		}
		fmt.Printf("health %d/100 over %d notes\n", h.Score, h.NoteCount)
		fmt.Printf("  link health      %.2f  (%d orphans)\n", h.LinkHealth, h.Orphans)
		fmt.Printf("  lint cleanliness %.2f  (%d warnings)\n", h.LintCleanliness, h.LintWarnings)
		fmt.Printf("  tag coverage     %.2f\n", h.TagCoverage)
		return nil
	}
	return cmd
}
