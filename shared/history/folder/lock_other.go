//go:build !unix && !windows

package folder

import "os"

// lockFile is a no-op where the platform has no file locks (wasip1,
// plan9): writes are then serialised within one process only.
func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) error { return nil }
