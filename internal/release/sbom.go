package release

import (
	"runtime/debug"
)

// CycloneDX is the part of a CycloneDX 1.5 JSON document (bom) that
// [SBOM] fills in: the binary as the metadata's component, each module
// linked into it as a library component with its package URL.
type CycloneDX struct {
	BOMFormat   string      `json:"bomFormat"`
	SpecVersion string      `json:"specVersion"`
	Version     int         `json:"version"`
	Metadata    Metadata    `json:"metadata"`
	Components  []Component `json:"components"`
}

// Metadata is a CycloneDX document's metadata.
type Metadata struct {
	Component Component `json:"component"`
}

// Component is a CycloneDX component.
type Component struct {
	Type       string     `json:"type"`
	Name       string     `json:"name"`
	Version    string     `json:"version,omitempty"`
	PURL       string     `json:"purl,omitempty"`
	Properties []Property `json:"properties,omitempty"`
}

// Property is a CycloneDX name/value property.
type Property struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// SBOM returns the CycloneDX document of the binary name whose build
// information is info: the main module (with the Go version and the
// build settings, VCS revision among them, as properties) and every
// dependency as Go embeds it, a replaced module under its replacement
// (what was linked), with its go.sum hash as the property "go:h1".
func SBOM(name string, info *debug.BuildInfo) *CycloneDX {
	main := Component{Type: "application", Name: name, Version: info.Main.Version, PURL: purl(info.Main.Path, info.Main.Version)}
	main.Properties = append(main.Properties, Property{"go:version", info.GoVersion}, Property{"go:module", info.Main.Path})
	for _, s := range info.Settings {
		main.Properties = append(main.Properties, Property{"go:build:" + s.Key, s.Value})
	}
	doc := &CycloneDX{BOMFormat: "CycloneDX", SpecVersion: "1.5", Version: 1, Metadata: Metadata{Component: main}, Components: []Component{}}
	for _, d := range info.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		c := Component{Type: "library", Name: d.Path, Version: d.Version, PURL: purl(d.Path, d.Version)}
		if d.Sum != "" {
			c.Properties = []Property{{"go:h1", d.Sum}}
		}
		doc.Components = append(doc.Components, c)
	}
	return doc
}

// purl is a Go module's package URL (purl-spec's golang type).
func purl(path, version string) string {
	if version == "" || version == "(devel)" {
		return "pkg:golang/" + path
	}
	return "pkg:golang/" + path + "@" + version
}
