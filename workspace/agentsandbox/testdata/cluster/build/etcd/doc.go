// Package tools is empty: see tools.go.
package tools
