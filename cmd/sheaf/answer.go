package main

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/sheaf-dev/sheaf/shared/config"
	"github.com/sheaf-dev/sheaf/shared/core"
)

func answerCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "answer --vault DIR QUESTION...",
		Short: "Answer a question from the vault's notes, with citations (needs an LLM provider)",
		Long: "Retrieves the pages most relevant to QUESTION, asks the chat model to answer from them only,\n" +
			"and prints the answer with its validated citations and verbatim quotes. The vault is --vault\n" +
			"(or SHEAF_VAULT). The model is --llm-base-url and\n" +
			"--llm-model (SHEAF_LLM_*), any OpenAI-compatible chat endpoint.",
		Args: cobra.MinimumNArgs(1),
	}
	cfg := withConfig(cmd)
	asJSON := cmd.Flags().Bool("json", false, "print the answer tool's JSON result")
	var in core.AnswerIn
	cmd.Flags().IntVar(&in.Limit, "limit", 6, "how many pages to retrieve as context (1-20)")
	cmd.Flags().BoolVar(&in.PreferRecent, "prefer-recent", false, "prefer fresher pages")
	cmd.Flags().BoolVar(&in.Rerank, "rerank", false, "rerank a wider candidate pool before answering")
	cmd.Flags().BoolVar(&in.Expand, "expand", false, "HyDE query expansion")
	cmd.Flags().BoolVar(&in.UseGraph, "use-graph", false, "graph prior and 1-hop neighbours of the top page")
	cmd.Flags().BoolVar(&in.CheckFaithfulness, "check-faithfulness", false, "judge the answer's claims against the passages")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		args, err := vaultFromArgs(cmd, cfg, args)
		if err != nil {
			return err
		}
		if in.Limit < 1 || in.Limit > 20 {
			return fmt.Errorf("--limit must be 1-20, got %d", in.Limit)
		}
		l, s, err := indexed(cmd, cfg)
		if err != nil {
			return err
		}
		defer l.Close()
		in.Query = strings.Join(args, " ")
		res, err := s.Answer(cmd.Context(), in)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(res)
		}
		fmt.Println(plain(res.Answer))
		if len(res.Citations) > 0 {
			fmt.Println("\nSources:")
			for i, c := range res.Citations {
				fmt.Printf("  [%d] %s  (%s)\n", i+1, plain(c.Path), plain(c.Title))
			}
		}
		if len(res.QuotedSpans) > 0 {
			fmt.Println("\nQuotes:")
			for _, q := range res.QuotedSpans {
				where := plain(q.Path)
				if q.Heading != "" {
					where += " § " + plain(q.Heading)
				}
				fmt.Printf("  %q\n      %s (passage %d)\n", strings.Join(strings.Fields(q.Quote), " "), where, q.Ordinal)
			}
		}
		if f := res.Faithfulness; f != nil {
			fmt.Printf("\nFaithfulness: %.2f", f.Score)
			if len(f.Unsupported) > 0 {
				fmt.Printf("; unsupported: %s", plain(strings.Join(f.Unsupported, " | ")))
			}
			fmt.Println()
		}
		fmt.Printf("\n%d pages retrieved, model %s\n", len(res.Retrieved), plain(res.Model))
		for _, w := range res.Warnings {
			fmt.Println("warning:", plain(w))
		}
		return nil
	}
	return cmd
}

// plain makes text from the vault or a model safe to print to a terminal:
// control characters other than newline and tab (escape sequences can
// retitle the window, rewrite the screen or worse) and invalid UTF-8
// become U+FFFD.
func plain(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !unicode.IsControl(r) {
			return r
		}
		return utf8.RuneError
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// vaultFromArgs takes the vault from the first argument when neither
// --vault nor SHEAF_VAULT names it, and returns the other arguments.
func vaultFromArgs(cmd *cobra.Command, cfg *config.Config, args []string) ([]string, error) {
	if cfg.Vault != "" {
		return args, nil
	}
	if len(args) < 2 {
		return nil, fmt.Errorf("no vault: pass --vault DIR (or set SHEAF_VAULT) and the question")
	}
	return vaultFirst(cmd, cfg, args), nil
}
