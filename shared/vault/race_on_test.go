//go:build race

package vault

const raceEnabled = true
