// Package catalogstore keeps the vault's catalog in a store as segments
// listed by a manifest: Snapshots is the writing side (the indexer saves
// through it), Catalogs the reading side (a core vault reads through it,
// revalidating as the indexer saves). Both sides share one on-store
// format, defined here, so they never drift apart; neither imports the
// pipeline or the tool surface.
package catalogstore
