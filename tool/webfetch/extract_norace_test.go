//go:build !race

package webfetch

const raceDetector = false
