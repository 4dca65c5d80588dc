package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/paigasus/helikon/backend/ossandbox"
)

// MCPServerReport is what helikon doctor says of one configured MCP
// server: where it is configured and how it would run.
type MCPServerReport struct {
	Name        string `json:"name"`
	From        string `json:"from"`              // --mcp, or the file that configures it
	Command     string `json:"command,omitempty"` // the command line, for a stdio server
	URL         string `json:"url,omitempty"`     // for an HTTP server
	Contained   bool   `json:"contained"`
	Containment string `json:"containment"` // in words
}

// maxMCPConfig bounds the .mcp.json doctor reads.
const maxMCPConfig = 1 << 20

// reportMCPServers reports the MCP servers configured for root: those of
// the project's .mcp.json (Claude Code's and other hosts' project file),
// contained when their command is helikon mcp wrap, and those given with
// --mcp, as helikon run would start them.
func reportMCPServers(root string, flagServers []string, unsandboxed bool, sup ossandbox.Support) ([]MCPServerReport, error) {
	var out []MCPServerReport
	for _, cmdline := range flagServers {
		r := MCPServerReport{Name: cmdline, From: "--mcp", Command: cmdline}
		switch {
		case unsandboxed:
			r.Containment = "UNCONTAINED (--mcp-unsandboxed): runs with your environment and privileges"
		case sup.Available:
			r.Contained = true
			r.Containment = "contained by helikon run in the OS sandbox over the root: no network, no home directory or credentials, environment PATH and --env only"
		default:
			r.Containment = "REFUSED: helikon run cannot contain it here (the OS sandbox is unavailable: " + sup.Reason + "); it would need --mcp-unsandboxed"
		}
		out = append(out, r)
	}
	path := filepath.Join(root, ".mcp.json")
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return out, err
	}
	defer f.Close()
	var cfg struct {
		MCPServers map[string]struct {
			Type    string   `json:"type"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
			URL     string   `json:"url"`
		} `json:"mcpServers"`
	}
	if err := json.NewDecoder(io.LimitReader(f, maxMCPConfig)).Decode(&cfg); err != nil {
		return out, fmt.Errorf("%s: %w", path, err)
	}
	names := make([]string, 0, len(cfg.MCPServers))
	for n := range cfg.MCPServers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := cfg.MCPServers[n]
		r := MCPServerReport{Name: n, From: path}
		switch {
		case s.URL != "" || s.Type == "http" || s.Type == "sse":
			r.URL = s.URL
			r.Containment = "remote (HTTP): not a process of this machine; helikon does not filter its traffic"
		case isMCPWrap(s.Command, s.Args):
			r.Command = strings.Join(append([]string{s.Command}, s.Args...), " ")
			r.Contained = sup.Available
			r.Containment = "contained by helikon mcp wrap in the OS sandbox, its tools through the permission pipeline as mcp__NAME__TOOL"
			if !sup.Available {
				r.Containment = "REFUSED: helikon mcp wrap cannot contain it here (the OS sandbox is unavailable: " + sup.Reason + ")"
			}
		default:
			r.Command = strings.Join(append([]string{s.Command}, s.Args...), " ")
			r.Containment = "UNCONTAINED: the host runs it with your privileges and environment; configure \"helikon\" with args [\"mcp\", \"wrap\", \"--name\", \"" + n + "\", \"--\", …the command…] instead"
		}
		out = append(out, r)
	}
	return out, nil
}

// isMCPWrap reports whether command args is helikon mcp wrap.
func isMCPWrap(command string, args []string) bool {
	base := filepath.Base(command)
	if base != "helikon" && base != "helikon-agent" {
		return false
	}
	return len(args) >= 2 && args[0] == "mcp" && args[1] == "wrap" && slices.Contains(args, "--")
}

// printMCPServers prints the servers' report.
func printMCPServers(w io.Writer, servers []MCPServerReport, err error) {
	if len(servers) == 0 && err == nil {
		return
	}
	fmt.Fprintln(w, "\nMCP servers (the project's .mcp.json and --mcp):")
	for _, s := range servers {
		what := s.Command
		if s.URL != "" {
			what = s.URL
		}
		fmt.Fprintf(w, "  %s (%s): %s\n    %s\n", s.Name, s.From, safeQuote(what), s.Containment)
	}
	if err != nil {
		fmt.Fprintf(w, "  error: %v\n", err)
	}
}

// safeQuote quotes s when it holds anything a terminal would interpret.
func safeQuote(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
		return fmt.Sprintf("%q", s)
	}
	return s
}
