package templates

import (
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"

	"github.com/baton-dev/baton/static"
)

var (
	// importLine is a module's import of named exports of a sibling module, as static/*.js write it.
	importLine = regexp.MustCompile(`(?m)^import \{([^}]*)\} from "\./([a-z]+\.js)";\n`)
	// exportDecl is an exported declaration, with its name.
	exportDecl = regexp.MustCompile(`(?m)^export (?:async )?(?:function\*? ?|const |let |class )(\w+)`)
	// moduleSyntax is any import or export left.
	moduleSyntax = regexp.MustCompile(`(?m)^(?:import|export)\b`)
)

// reportScript returns static/report.js, a module, as the one classic script a report inlines: a
// page opened from file:// cannot load a module from another file, so each module report.js
// imports (graph.js, keymap.js, rowfilter.js, sequence.js, waterfall.js) is written in place of its import,
// inside a function that returns its exports. It fails on any import or export it cannot inline that way,
// rather than write a report whose script breaks.
func reportScript() (string, error) {
	src, err := fs.ReadFile(static.FS, "report.js")
	if err != nil {
		return "", fmt.Errorf("report: read report.js: %w", err)
	}
	var failed error
	out := importLine.ReplaceAllStringFunc(string(src), func(line string) string {
		m := importLine.FindStringSubmatch(line)
		dep, err := inlineModule(m[2], strings.Split(m[1], ","))
		if err != nil && failed == nil {
			failed = err
		}
		return "const {" + m[1] + "} = " + dep + ";\n"
	})
	if failed != nil {
		return "", failed
	}
	if moduleSyntax.MatchString(out) {
		return "", fmt.Errorf("report: report.js has an import the report cannot inline")
	}
	return "\"use strict\";\n(() => {\n" + out + "})();\n", nil
}

// inlineModule returns module name as an expression whose value is an object of its exports,
// checking that it exports each of names and imports nothing.
func inlineModule(name string, names []string) (string, error) {
	src, err := fs.ReadFile(static.FS, name)
	if err != nil {
		return "", fmt.Errorf("report: read %s: %w", name, err)
	}
	var exported []string
	for _, m := range exportDecl.FindAllStringSubmatch(string(src), -1) {
		exported = append(exported, m[1])
	}
	body := exportDecl.ReplaceAllStringFunc(string(src), func(decl string) string { return strings.TrimPrefix(decl, "export ") })
	if moduleSyntax.MatchString(body) {
		return "", fmt.Errorf("report: %s has an import or export the report cannot inline", name)
	}
	for _, n := range names {
		if n = strings.TrimSpace(n); !slices.Contains(exported, n) {
			return "", fmt.Errorf("report: report.js imports %q, which %s does not export", n, name)
		}
	}
	return "(() => {\n" + body + "\nreturn { " + strings.Join(exported, ", ") + " };\n})()", nil
}
