// Package layering holds the test of the import order of the module's
// rooms (docs/decisions/0025-rooms.md): cmd > ops > http > dispatch >
// schema modules > streams > tenant > kernel, each package importing only
// its own room or rooms below it, and the running system never importing
// the proving harness or the test kit. It has no code besides the test.
package layering
