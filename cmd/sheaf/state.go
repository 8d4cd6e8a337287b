package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sheaf-dev/sheaf/shared/config"
	"github.com/sheaf-dev/sheaf/shared/config/local"
)

func stateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "state",
		Short: "Say where a vault's index, state and keys live, or move them out of the vault",
		Long: `Sheaf writes nothing into a folder vault but notes, the trash (.sheaf/trash/)
and the ledger (log.md, from the first write on). The index, the catalog,
the vectors and Sheaf's own objects (leases, proposals, the cursor key) live
in a folder named after the vault in the user cache folder, the API keys in
one in the user config folder; --state puts the state anywhere. A
<vault>/.sheaf/ folder made by an earlier Sheaf is used as it is until
` + "`sheaf state migrate`" + ` moves it out.`,
	}
	cmd.AddCommand(stateWhereCmd(), stateMigrateCmd())
	return cmd
}

// folderVault returns the absolute folder of a folder vault.
func folderVault(cfg *config.Config) (string, error) {
	switch {
	case cfg.Vault == "":
		return "", fmt.Errorf("no vault: pass --vault DIR (or set SHEAF_VAULT)")
	case config.IsCloud(cfg.Vault):
		return "", fmt.Errorf("%s is a cloud vault: its state lives under the bucket's .sheaf/ prefix", cfg.Vault)
	}
	return filepath.Abs(cfg.Vault)
}

func stateWhereCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "where --vault DIR",
		Short: "Print where the vault's state and keys live",
		Args:  cobra.NoArgs,
	}
	cfg := withConfig(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		root, err := folderVault(cfg)
		if err != nil {
			return err
		}
		st, l, err := local.OpenStore(root, cfg.State)
		if err != nil {
			return err
		}
		defer st.Close()
		fmt.Printf("vault  %s\nstate  %s\nkeys   %s\n", l.Vault, l.State, filepath.Join(l.Keys, "keys.json"))
		if l.Legacy {
			fmt.Println("the state is in the vault's .sheaf/ folder, where an earlier Sheaf kept it: `sheaf state migrate` moves it out")
		}
		return nil
	}
	return cmd
}

func stateMigrateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate --vault DIR [--state DIR]",
		Short: "Move the state an earlier Sheaf kept in <vault>/.sheaf/ out of the vault",
		Long: `migrate moves <vault>/.sheaf/ (all but the trash, which holds notes) to the
state folder (--state, or the default in the user cache folder) and its
keys.json to the user config folder (mode 0600). Stop every Sheaf server of
the vault first.`,
		Args: cobra.NoArgs,
	}
	cfg := withConfig(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		root, err := folderVault(cfg)
		if err != nil {
			return err
		}
		m, err := local.Migrate(root, cfg.State)
		if err != nil {
			return err
		}
		fmt.Printf("moved %d entries of %s to %s\n", len(m.Entries), m.From, m.State)
		if m.Keys != "" {
			fmt.Printf("moved the API keys to %s\n", m.Keys)
		}
		if cfg.State != "" {
			fmt.Printf("pass --state %s (or set SHEAF_STATE) to every sheaf command of this vault\n", m.State)
		}
		return nil
	}
	return cmd
}
