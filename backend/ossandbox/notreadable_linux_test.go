//go:build linux

package ossandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInterpreter(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "tool"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=/x", "PATH=relative:" + bin}
	for _, tc := range []struct{ first, want string }{
		{"#!/bin/sh\n", "/bin/sh"},
		{"#! /usr/bin/python3 -u\n", "/usr/bin/python3"},
		{"#!/usr/bin/env tool\n", filepath.Join(bin, "tool")},
		{"#!/usr/bin/env -S A=1 tool -x\n", filepath.Join(bin, "tool")},
		{"#!/usr/bin/env missing\n", ""},
		{"#!/usr/bin/env\n", "/usr/bin/env"},
		{"#!\n", ""},
		{"echo no\n", ""},
		{"", ""},
		{"#!/bin/sh", "/bin/sh"}, // no newline
	} {
		p := filepath.Join(dir, "script")
		if err := os.WriteFile(p, []byte(tc.first), 0o755); err != nil {
			t.Fatal(err)
		}
		if got := interpreter(p, env, dir); got != tc.want {
			t.Errorf("interpreter(%q) = %q, want %q", tc.first, got, tc.want)
		}
	}
}

func TestDeniedPaths(t *testing.T) {
	for _, tc := range []struct{ stderr, want string }{
		{"/usr/bin/bash: line 1: /h/.pyenv/shims/python3: Permission denied\n", "/h/.pyenv/shims/python3"},
		{"/r/shim: 2: exec: /h/v/bin/python3: Permission denied\n", "/h/v/bin/python3"},
		{"bash: line 1: ./script: /h/v/bin/python3: bad interpreter: Permission denied\n", "/h/v/bin/python3"},
		{"cat: /h/.ssh/id: Permission denied\n", "/h/.ssh/id"}, // unreadable() then finds no program there to explain
		{"no path here: Permission denied\n", ""},
	} {
		var got []string
		for _, m := range deniedRe.FindAllStringSubmatch(tc.stderr, -1) {
			got = append(got, m[1])
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%q: %q, want %q", tc.stderr, got, tc.want)
		}
	}
}

// FuzzInterpreter: whatever a file's first line holds, interpreter returns
// nothing or a path it names (or finds on PATH), and does not panic.
func FuzzInterpreter(f *testing.F) {
	f.Add("#!/bin/sh -e\n")
	f.Add("#!/usr/bin/env -S python3 -u\n")
	f.Add("#!\x00\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, content string) {
		p := filepath.Join(dir, "script")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got := interpreter(p, []string{"PATH=/nonexistent-helikon"}, dir)
		if got != "" && !strings.Contains(content, got) {
			t.Fatalf("interpreter of %q is %q, which it does not name", content, got)
		}
	})
}
