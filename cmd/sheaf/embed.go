package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/sheaf-dev/sheaf/shared/core"
)

func embedCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "embed --vault DIR",
		Short: "Index the vault, then embed new and changed notes (needs an embeddings provider)",
		Long: "Brings the index up to date, then embeds every new or changed note (only passages whose\n" +
			"text changed go to the provider) and prunes deleted ones, as reindex_embeddings does.\n" +
			"Prints {notes, passages}: how many notes were (re)embedded, and how many texts (passages and\n" +
			"names) went to the provider. The vault is --vault (SHEAF_VAULT); the\n" +
			"provider is --embed-base-url and --embed-model (SHEAF_EMBED_*).",
		Args: cobra.MaximumNArgs(1),
	}
	cfg := withConfig(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 1 {
			vaultFirst(cmd, cfg, args)
		}
		if cfg.EmbedBaseURL == "" {
			return errors.New("no embeddings provider: set --embed-base-url and --embed-model (SHEAF_EMBED_BASE_URL, SHEAF_EMBED_MODEL)")
		}
		l, s, err := indexed(cmd, cfg)
		if err != nil {
			return err
		}
		defer l.Close()
		res, err := s.ReindexEmbeddings(cmd.Context(), core.ReindexIn{})
		if err != nil {
			return err
		}
		return printJSON(res)
	}
	return cmd
}
