package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sheaf-dev/sheaf/shared/tools"
)

func evalCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval [VAULT]",
		Short: "Score retrieval (and, with an LLM, answer faithfulness) against eval/questions.jsonl",
		Long: "Reads the vault's eval/questions.jsonl ({question, expected_paths, must_contain} per line) and\n" +
			"prints recall@k, precision@k, MRR and hit rate over the top k retrieved notes, per question\n" +
			"and overall. With --llm-base-url and --llm-model it also answers each question and scores\n" +
			"faithfulness. --mode compares retrieval lanes: fulltext, semantic or hybrid (the last two\n" +
			"need --embed-*). The vault is VAULT or --vault.",
		Args: cobra.MaximumNArgs(1),
	}
	cfg := withConfig(cmd)
	asJSON := cmd.Flags().Bool("json", false, "print the eval tool's JSON result")
	var in tools.EvalIn
	cmd.Flags().IntVar(&in.K, "k", 6, "top-k cutoff (1-50)")
	cmd.Flags().StringVar(&in.Mode, "mode", "", "retrieval lane: fulltext, semantic or hybrid (default: hybrid with embeddings, else fulltext)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 1 {
			cfg.Vault = args[0]
		}
		if in.K < 1 || in.K > 50 {
			return fmt.Errorf("--k must be 1-50, got %d", in.K)
		}
		switch in.Mode {
		case "", "fulltext", "semantic", "hybrid":
		default:
			return fmt.Errorf("--mode must be fulltext, semantic or hybrid, got %q", in.Mode)
		}
		l, s, err := indexed(cmd, cfg)
		if err != nil {
			return err
		}
		defer l.Close()
		res, err := s.Eval(cmd.Context(), in)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(res)
		}
		printEval(res)
		return nil
	}
	return cmd
}

// printEval prints eval's result as a table.
func printEval(r *tools.EvalOut) {
	fmt.Printf("%d questions, k=%d, mode %s\n", r.Count, r.K, r.Mode)
	faith := "-"
	if r.FaithfulnessRate != nil {
		faith = fmt.Sprintf("%.3f", *r.FaithfulnessRate)
	}
	fmt.Printf("recall@%d %.3f  precision@%d %.3f  MRR %.3f  hit rate %.3f  faithfulness %s\n\n",
		r.K, r.RecallAtK, r.K, r.PrecisionAtK, r.MRR, r.HitRate, faith)
	fmt.Printf("%-4s  %-6s  %-6s  %-5s  %s\n", "hit", "recall", "RR", "faith", "question")
	for _, q := range r.PerQuestion {
		hit, f := "miss", "-"
		if q.Hit {
			hit = "hit"
		}
		if q.Faithful != nil {
			f = map[bool]string{true: "yes", false: "no"}[*q.Faithful]
		}
		fmt.Printf("%-4s  %-6.2f  %-6.2f  %-5s  %s\n", hit, q.Recall, q.ReciprocalRank, f, plain(q.Question))
		if !q.Hit {
			fmt.Printf("%28s expected %s, got %s\n", "", plain(strings.Join(q.Expected, ", ")), plain(strings.Join(q.Retrieved, ", ")))
		}
		if q.AnswerError != "" {
			fmt.Printf("%28s answer failed: %s\n", "", plain(q.AnswerError))
		}
	}
	for _, e := range r.Errors {
		fmt.Printf("line %d of %s skipped: %s\n", e.Line, tools.EvalFile, plain(e.Message))
	}
	if r.Skipped > 0 {
		fmt.Printf("%d more questions not scored (500 per run)\n", r.Skipped)
	}
}
