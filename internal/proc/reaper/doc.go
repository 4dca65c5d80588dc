// Package reaper is the child subreaper that internal/proc re-executes this
// program as (proc.TrackReaper tracking), and the /proc reading it needs. It is
// a package of its own, importing only low-level packages, so that its init
// function, which recognises the reaper role, runs before the rest of the
// program is initialised (package initialisation follows import order, and
// among ready packages the import path's order): a program linking large
// SDKs is re-executed as a reaper without running their initialisation.
// Linux only.
package reaper
