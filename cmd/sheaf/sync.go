package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/sheaf-dev/sheaf/shared/catalogstore"
	"github.com/sheaf-dev/sheaf/shared/config"
	localcfg "github.com/sheaf-dev/sheaf/shared/config/local"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	"github.com/sheaf-dev/sheaf/shared/store/s3"
	"github.com/sheaf-dev/sheaf/shared/vaultsync"
)

func syncCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sync LOCAL s3://BUCKET/PREFIX",
		Short: "Send a vault folder to its cloud copy (or fetch it with --pull), incrementally",
		Long: `sync sends what changed in the folder LOCAL to the cloud vault (or, with
--pull, fetches what changed there). Unchanged files are neither read nor
sent: a state file in the user's cache folder (never in the vault) records
what the last sync left on both sides. Hidden folders (.obsidian, .sheaf,
.trash, ...), sync tools' working files and --exclude globs stay out.

A file changed in the cloud since the last sync is never overwritten; when
it changed on both sides, both versions are kept (NAME.conflict-HOST-TIME.md
beside it, on both sides) and the sync says so. A rename is carried as one
move; deletions only with --delete, and never of a file changed since.

--watch keeps sending changes as they are saved; --wait returns when the
cloud index shows everything sent (it reads the catalog the indexer saves
in the bucket), or says what is still pending after --wait-timeout.
Credentials come from the AWS chain (AWS_ACCESS_KEY_ID, a profile, a role);
s3://BUCKET/PREFIX?endpoint=URL&path_style=true reaches S3-compatible servers.`,
		Args: cobra.ExactArgs(2),
	}
	f := cmd.Flags()
	pull := f.Bool("pull", false, "fetch from the cloud vault instead of sending to it")
	del := f.Bool("delete", false, "carry deletions too (never of a file changed on the other side since the last sync)")
	excludes := f.StringArray("exclude", nil, "leave paths matching this glob out (repeatable; 'Private/', '**/*.pdf')")
	dry := f.Bool("dry-run", false, "say what would be done, and do nothing")
	watch := f.Bool("watch", false, "after syncing, keep sending changes as they are saved, until interrupted")
	wait := f.Bool("wait", false, "after sending, wait until the cloud index shows everything sent")
	waitTimeout := f.Duration("wait-timeout", 10*time.Minute, "how long --wait waits")
	state := f.String("state", "", "folder of the sync state (default: the user's cache folder)")
	parallel := f.Int("parallel", 16, "files sent or fetched at once")
	quiet := f.Bool("quiet", false, "no progress bar or per-file lines; the summary only")
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error { return config.Env(cmd.Flags()) }
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		switch {
		case *pull && (*watch || *wait):
			return errors.New("--watch and --wait go with sending, not with --pull")
		case *dry && (*watch || *wait):
			return errors.New("--dry-run sends nothing to watch or wait for")
		}
		local, err := filepath.Abs(args[0])
		if err != nil {
			return err
		}
		if st, err := os.Stat(local); err != nil || !st.IsDir() {
			return fmt.Errorf("%s is not a folder", args[0])
		}
		if !config.IsCloud(args[1]) {
			return fmt.Errorf("%s: the second argument is the cloud vault, s3://BUCKET/PREFIX", args[1])
		}
		sc, err := s3.ParseURL(args[1])
		if err != nil {
			return err
		}
		filter, err := vaultsync.NewFilter(*excludes)
		if err != nil {
			return err
		}
		// The write lock a `sheaf serve` of this folder takes (in the
		// user's cache folder, never in the vault), so the two never
		// write a note at once.
		layout, err := localcfg.Locate(local, "")
		if err != nil {
			return err
		}
		ls, err := fs.OpenWith(local, fs.Options{LockFile: layout.VaultLock})
		if err != nil {
			return err
		}
		defer ls.Close()
		rs, err := s3.Open(ctx, sc)
		if err != nil {
			return err
		}
		statePath, err := vaultsync.StatePath(*state, local, sc.URL())
		if err != nil {
			return err
		}
		st, err := vaultsync.LoadState(statePath, local, sc.URL())
		if err != nil {
			return err
		}
		o := vaultsync.Options{Delete: *del, DryRun: *dry, Parallel: *parallel}
		if *pull {
			o.Direction = vaultsync.Pull
		}
		out := cmd.OutOrStdout()
		if !*quiet {
			o.Progress = newSyncProgress(out, *dry)
		}
		s := &vaultsync.Syncer{Local: ls, Remote: rs, State: st, Filter: filter, Options: o}
		start := time.Now()
		rep, err := s.Run(ctx)
		if rep != nil {
			printSyncReport(out, rep, o, time.Since(start))
		}
		if err != nil {
			return err
		}
		if *wait {
			if err := waitIndexed(ctx, out, rs, rep.Expect, *waitTimeout); err != nil {
				return err
			}
		}
		if !*watch {
			return nil
		}
		fmt.Fprintf(out, "watching %s (Ctrl-C stops)\n", local)
		s.Progress = nil
		return s.Watch(ctx, local, vaultsync.WatchOptions{Sent: func(rep *vaultsync.Report, err error) {
			if rep != nil {
				printActions(out, rep, o.DryRun)
			}
			if err != nil {
				fmt.Fprintln(out, "sync:", err)
			}
		}})
	}
	return cmd
}

// waitIndexed waits for the cloud index to show what a sync sent, saying
// what is still pending when it gives up.
func waitIndexed(ctx context.Context, out io.Writer, rs *s3.Store, want []vaultsync.Expect, timeout time.Duration) error {
	if len(want) == 0 {
		fmt.Fprintln(out, "nothing sent: nothing to wait for")
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last, said := -1, time.Time{}
	res, err := vaultsync.Wait(ctx, &catalogstore.Catalogs{Store: rs}, want, time.Second, func(n int) {
		if n != last && n > 0 && time.Since(said) >= 5*time.Second {
			fmt.Fprintf(out, "waiting for the cloud index: %d of %d changes pending\n", n, len(want))
			last, said = n, time.Now()
		}
	})
	for p, why := range res.Problems {
		fmt.Fprintf(out, "not indexed: %s: %s\n", p, why)
	}
	if errors.Is(err, vaultsync.ErrPending) {
		for i, x := range res.Pending {
			if i == 20 {
				fmt.Fprintf(out, "  ... and %d more\n", len(res.Pending)-i)
				break
			}
			what := "indexed"
			if x.Deleted {
				what = "removed"
			}
			fmt.Fprintf(out, "  pending: %s (not yet %s)\n", x.Path, what)
		}
		return fmt.Errorf("the cloud index has not caught up after %s: %d of %d changes pending (is the indexer running?)", timeout, len(res.Pending), len(want))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "the cloud index shows all %d changes (%.1fs)\n", len(want), res.Took.Seconds())
	return nil
}

// syncProgress is a progress bar on a terminal, one line per file
// otherwise.
type syncProgress struct {
	out io.Writer
	bar *progressbar.ProgressBar
	dry bool
}

func newSyncProgress(out io.Writer, dry bool) *syncProgress {
	p := &syncProgress{out: out, dry: dry}
	if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) && !dry {
		p.out = nil
	}
	return p
}

func (p *syncProgress) Planned(n int) {
	if p.out == nil && n > 0 {
		p.bar = progressbar.NewOptions(n, progressbar.OptionSetWriter(os.Stderr), progressbar.OptionSetDescription("syncing"),
			progressbar.OptionShowCount(), progressbar.OptionSetItsString("files"), progressbar.OptionShowIts(), progressbar.OptionClearOnFinish())
	}
}

func (p *syncProgress) Done(a vaultsync.Action) {
	if p.bar != nil {
		_ = p.bar.Add(1)
		if a.Err != nil || a.Kind == vaultsync.KindConflict {
			_ = p.bar.Clear()
			fmt.Fprintln(os.Stderr, actionLine(a, p.dry))
		}
		return
	}
	fmt.Fprintln(p.out, actionLine(a, p.dry))
}

// actionLine says what happened to one path.
func actionLine(a vaultsync.Action, dry bool) string {
	verb := string(a.Kind)
	if dry {
		verb = "would " + verb
	}
	switch {
	case a.Err != nil:
		return fmt.Sprintf("failed %s %s: %v", a.Kind, a.Path, a.Err)
	case a.Kind == vaultsync.KindMove:
		return fmt.Sprintf("%s %s -> %s", verb, a.From, a.Path)
	case a.Kind == vaultsync.KindConflict && a.Copy != "":
		return fmt.Sprintf("%s %s: both sides changed it; the other version is kept as %s", verb, a.Path, a.Copy)
	case a.Kind == vaultsync.KindConflict:
		return fmt.Sprintf("%s %s: both sides changed it", verb, a.Path)
	case a.Reason != "":
		return fmt.Sprintf("%s %s: %s", verb, a.Path, a.Reason)
	}
	return fmt.Sprintf("%s %s", verb, a.Path)
}

// printActions prints the lines a watcher's batch did.
func printActions(out io.Writer, rep *vaultsync.Report, dry bool) {
	for _, a := range rep.Actions {
		fmt.Fprintln(out, actionLine(a, dry))
	}
}

// keptShown is how many files kept back for one reason are named; the
// rest are counted (a bucket that holds 10,000 notes this folder has not
// fetched names 3 of them, not 10,000 on every run).
const keptShown = 3

// printSyncReport prints the files kept back (a few for each reason, and
// how many more) and the summary.
func printSyncReport(out io.Writer, rep *vaultsync.Report, o vaultsync.Options, took time.Duration) {
	more := map[string]int{}
	var reasons []string
	for _, a := range rep.Actions {
		if a.Kind != vaultsync.KindKept {
			continue
		}
		if a.Err == nil {
			if more[a.Reason]++; more[a.Reason] == 1 {
				reasons = append(reasons, a.Reason)
			}
			if more[a.Reason] > keptShown {
				continue
			}
		}
		fmt.Fprintln(out, actionLine(a, o.DryRun))
	}
	for _, r := range reasons {
		if n := more[r] - keptShown; n > 0 {
			fmt.Fprintf(out, "kept %d more: %s\n", n, r)
		}
	}
	c := rep.Counts
	sent, verb := c[vaultsync.KindUpload], "sent"
	if o.Direction == vaultsync.Pull {
		sent, verb = c[vaultsync.KindDownload], "fetched"
	}
	if o.DryRun {
		verb = "would be " + verb
	}
	rate := 0.0
	if took > 0 {
		rate = float64(sent+c[vaultsync.KindMove]+c[vaultsync.KindConflict]) / took.Seconds()
	}
	fmt.Fprintf(out, "%d files %s (%d bytes), %d moved, %d deleted, %d conflicts, %d same, %d kept, %d unchanged, %d failed in %.1fs (%.0f files/s)\n",
		sent, verb, rep.Bytes, c[vaultsync.KindMove], c[vaultsync.KindDeleteRemote]+c[vaultsync.KindDeleteLocal], c[vaultsync.KindConflict],
		c[vaultsync.KindSame], c[vaultsync.KindKept], c[vaultsync.KindUnchanged], rep.Failed, took.Seconds(), rate)
}
