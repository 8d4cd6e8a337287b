package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sheaf-dev/sheaf/shared/core"
)

func relatedCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "related --vault DIR NOTE",
		Short: "Notes nearest in meaning to NOTE that it is not linked with (needs an embeddings provider)",
		Long: "Prints the notes semantically nearest to NOTE (a vault-relative path), leaving out the note\n" +
			"itself and the notes it links to or that link to it. The vault is --vault (SHEAF_VAULT); the\n" +
			"embeddings provider is --embed-base-url and --embed-model (SHEAF_EMBED_*). Changed notes\n" +
			"are embedded first.",
		Args: cobra.RangeArgs(1, 2),
	}
	cfg := withConfig(cmd)
	asJSON := cmd.Flags().Bool("json", false, "print the related_notes tool's JSON result")
	limit := cmd.Flags().Int("limit", 5, "how many notes")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 2 {
			args = vaultFirst(cmd, cfg, args)
		}
		if *limit < 1 || *limit > 100 {
			return fmt.Errorf("--limit must be 1-100, got %d", *limit)
		}
		l, s, err := indexed(cmd, cfg)
		if err != nil {
			return err
		}
		defer l.Close()
		res, err := s.RelatedNotes(cmd.Context(), core.RelatedIn{Path: args[0], Limit: *limit})
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(res)
		}
		for i, h := range res.Items {
			fmt.Printf("%2d. %s  (%s, %.3f)\n    %s\n", i+1, plain(h.Path), plain(h.Title), h.Score, plain(strings.ReplaceAll(h.Snippet, "\n", " ")))
		}
		if len(res.Items) == 0 {
			fmt.Println("no related notes")
		}
		return nil
	}
	return cmd
}
