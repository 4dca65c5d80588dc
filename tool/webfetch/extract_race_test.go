//go:build race

package webfetch

// raceDetector: the race detector makes extraction about ten times slower
// and finds nothing in the single-goroutine corpus test, which then scores
// a sample of the corpus.
const raceDetector = true
