package rank

import (
	"os"
	"path/filepath"
	"runtime"
)

// EnvEvalSets names the folder holding the development question sets, one
// sub-folder per set with vault/, questions.jsonl, LICENSE and SOURCE.md.
const EnvEvalSets = "SHEAF_EVAL_SETS"

// EvalSetsDir is where the development question sets are: $SHEAF_EVAL_SETS,
// else the team's shared/eval folder beside the repository (../shared/eval
// from its root, as CI lays it out, or ../../shared/eval from a worktree
// one level further down), else the copy vendored in infra/eval-sets (what
// a fresh clone, and so CI, has). ok is false when there is none.
func EvalSetsDir() (dir string, ok bool) {
	if d := os.Getenv(EnvEvalSets); d != "" {
		_, err := os.Stat(d)
		return d, err == nil
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	for _, d := range []string{filepath.Join(root, "..", "shared", "eval"), filepath.Join(root, "..", "..", "shared", "eval")} {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return filepath.Clean(d), true
		}
	}
	d := filepath.Join(root, "infra", "eval-sets")
	if st, err := os.Stat(d); err == nil && st.IsDir() {
		return filepath.Clean(d), true
	}
	return filepath.Clean(d), false
}
