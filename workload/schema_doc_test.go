package workload

import (
	"bytes"
	"encoding"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var updateSchemaDoc = flag.Bool("update-schema-doc", false, "rewrite ../docs/workload.md from the Spec struct")

// docStruct is a struct type declaration with its doc comment.
type docStruct struct {
	doc string
	st  *ast.StructType
}

// parseStructs reads the struct types (and their doc comments) declared in
// the non-test Go files of dirs, keyed by "pkg.Type".
func parseStructs(t *testing.T, dirs map[string]string) map[string]docStruct {
	out := map[string]docStruct{}
	for pkg, dir := range dirs {
		fset := token.NewFileSet()
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.TYPE {
					continue
				}
				for _, sp := range gd.Specs {
					ts := sp.(*ast.TypeSpec)
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					doc := gd.Doc.Text()
					if ts.Doc != nil {
						doc = ts.Doc.Text()
					}
					out[pkg+"."+ts.Name.Name] = docStruct{doc: doc, st: st}
				}
			}
		}
	}
	return out
}

// docMarkdown turns a type's doc comment into Markdown: paragraphs joined
// into lines, "- " list items kept as a list.
func docMarkdown(doc string) string {
	var out []string
	para := ""
	flush := func() {
		if para != "" {
			out = append(out, para)
			para = ""
		}
	}
	inList := false
	for _, l := range strings.Split(doc, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
			flush()
			inList = false
		case strings.HasPrefix(l, "- "):
			flush()
			if !inList && len(out) > 0 {
				out = append(out, "")
			}
			out = append(out, l)
			inList = true
		case inList:
			out[len(out)-1] += " " + l
		default:
			if para == "" && len(out) > 0 && !inList {
				out = append(out, "")
			}
			if para != "" {
				para += " "
			}
			para += l
		}
	}
	flush()
	return strings.Join(out, "\n")
}

// oneLine joins a comment's lines.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// fileMeaning is a key's meaning in a workload file: its doc comment, except
// that a key with a default (def not "—") is never required there. A
// "Required ..." sentence (the library's contract, met by deriving the
// value from the default) gives way to the key's help, which says what the
// default does ("0 = derive from memory").
func fileMeaning(doc, help, def string) string {
	// A "Required ..." sentence: the library's contract for a struct
	// (scheduler.Config needs its KV blocks).
	requiredSentence := regexp.MustCompile(`\s*Required\b[^.]*\.`)
	if def == "—" || !requiredSentence.MatchString(doc) {
		return doc
	}
	doc = strings.TrimSpace(requiredSentence.ReplaceAllString(doc, ""))
	if help != "" {
		doc += " In a workload file: " + help + "."
	}
	return doc
}

// schemaDoc renders the workload file's schema from the Spec struct: every
// yaml key with its type, default and doc comment. Nested structs get their
// own section; Deployment's keys show DefaultDeployment's values.
func schemaDoc(t *testing.T) string {
	types := parseStructs(t, map[string]string{"workload": ".", "settings": "../settings", "scheduler": "../scheduler"})
	defaults := map[string]string{}
	var collect func(prefix string, v reflect.Value)
	collect = func(prefix string, v reflect.Value) {
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			name := strings.Split(f.Tag.Get("yaml"), ",")[0]
			if !f.IsExported() || name == "-" {
				continue
			}
			fv := v.Field(i)
			if name == "" && f.Anonymous {
				collect(prefix, fv)
				continue
			}
			key := prefix + name
			if m, ok := fv.Interface().(encoding.TextMarshaler); ok && fv.Kind() == reflect.Struct {
				// A value read from text (engine.Engine): its text is the default.
				b, _ := m.MarshalText()
				defaults[key] = fmt.Sprintf("%q", b)
				continue
			}
			if fv.Kind() == reflect.Struct && f.Type != reflect.TypeOf(Duration(0)) {
				collect(key+".", fv)
				continue
			}
			defaults[key] = fmt.Sprint(fv.Interface())
			if d, ok := fv.Interface().(Duration); ok {
				defaults[key] = d.String()
			}
			if fv.Kind() == reflect.String && fv.String() == "" {
				defaults[key] = `""`
			}
		}
	}
	collect("", reflect.ValueOf(DefaultDeployment()))

	type section struct {
		title, typ, pkg string
	}
	var b strings.Builder
	queue := []section{{"Top level", "Spec", "workload"}}
	done := map[string]bool{}
	for len(queue) > 0 {
		sec := queue[0]
		queue = queue[1:]
		ds, ok := types[sec.pkg+"."+sec.typ]
		if !ok {
			t.Fatalf("type %s.%s not found", sec.pkg, sec.typ)
		}
		fmt.Fprintf(&b, "## %s\n\n", sec.title)
		if sec.typ != "Spec" && ds.doc != "" {
			fmt.Fprintf(&b, "%s\n\n", docMarkdown(ds.doc))
		}
		b.WriteString("| key | type | default | meaning |\n|---|---|---|---|\n")
		prefix := ""
		if sec.title != "Top level" {
			prefix = strings.TrimSuffix(strings.Trim(sec.title, "`"), " (a length distribution)") + "."
		}
		var rows func(fields []*ast.Field, pkg string)
		rows = func(fields []*ast.Field, pkg string) {
			for _, f := range fields {
				tag := ""
				if f.Tag != nil {
					tag = reflect.StructTag(strings.Trim(f.Tag.Value, "`")).Get("yaml")
				}
				name := strings.Split(tag, ",")[0]
				typ, tpkg := typeName(f.Type, pkg)
				if len(f.Names) == 0 { // embedded
					if strings.Contains(tag, "inline") {
						if ds, ok := types[tpkg+"."+typ]; ok {
							rows(ds.st.Fields.List, tpkg)
						}
					}
					continue
				}
				if name == "" || name == "-" || !f.Names[0].IsExported() {
					continue
				}
				key := prefix + name
				kind := typ
				if _, isStruct := types[tpkg+"."+typ]; isStruct && typ != "LengthDist" {
					kind = "object"
					sub := key
					if strings.HasPrefix(exprString(f.Type), "[]") {
						kind, sub = "list of objects", key+"[]"
					}
					if !done[sub] {
						done[sub] = true
						queue = append(queue, section{"`" + sub + "`", typ, tpkg})
					}
				} else if typ == "LengthDist" {
					kind = "length distribution"
					if !done["LengthDist"] {
						done["LengthDist"] = true
						queue = append(queue, section{"Length distributions", "LengthDist", "workload"})
					}
				} else {
					kind = friendlyType(exprString(f.Type))
				}
				def := defaults[strings.TrimPrefix(key, "")]
				if def == "" {
					def = "—"
				}
				help := ""
				if f.Tag != nil {
					help = reflect.StructTag(strings.Trim(f.Tag.Value, "`")).Get("help")
				}
				meaning := fileMeaning(oneLine(f.Doc.Text()), help, def)
				if meaning == "" {
					meaning = help
				}
				if meaning == "" {
					meaning = "see above"
				}
				meaning = strings.ReplaceAll(meaning, "|", "\\|")
				fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", key, kind, strings.ReplaceAll(def, "|", "\\|"), meaning)
			}
		}
		if sec.typ == "LengthDist" {
			prefix = ""
		}
		rows(ds.st.Fields.List, sec.pkg)
		b.WriteString("\n")
	}
	b.WriteString(benchDoc)
	b.WriteString("| argument | in roofsim |\n|---|---|\n")
	flags := benchFlags()
	for _, name := range slices.Sorted(maps.Keys(flags)) {
		fmt.Fprintf(&b, "| `%s` | %s |\n", name, flags[name].help)
	}
	return b.String()
}

// benchDoc introduces the table of vllm bench serve arguments.
const benchDoc = `## vllm bench serve arguments (` + "`bench`, `sim run --bench-args`" + `)

A benchmark run with ` + "`vllm bench serve`" + ` and the random dataset can be re-run in
simulation unchanged: pass its arguments to ` + "`sim run --bench-args \"...\"`" + ` (a leading
` + "`vllm bench serve`" + ` is allowed; words are split as a shell splits them), or write them under
` + "`bench:`" + ` in a workload file, as one string or as a map
(` + "`bench: {request-rate: 10, num-prompts: 200}`" + `). They replace the clients with one client,
` + "`bench`" + `, with vLLM's defaults for what is left out. Any other argument is an error that names
it. The run's arrivals and lengths follow vLLM's definitions but draw from roofsim's
random streams, so a seed reproduces a simulation, not vLLM's exact prompts.

`

// typeName returns a field type's base name and package (pointer and slice
// removed; "scheduler.Config" gives ("Config", "scheduler")).
func typeName(e ast.Expr, pkg string) (string, string) {
	switch x := e.(type) {
	case *ast.StarExpr:
		return typeName(x.X, pkg)
	case *ast.ArrayType:
		return typeName(x.Elt, pkg)
	case *ast.SelectorExpr:
		return x.Sel.Name, fmt.Sprint(x.X)
	case *ast.Ident:
		return x.Name, pkg
	}
	return exprString(e), pkg
}

func exprString(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return "*" + exprString(x.X)
	case *ast.ArrayType:
		return "[]" + exprString(x.Elt)
	case *ast.SelectorExpr:
		return exprString(x.X) + "." + x.Sel.Name
	case *ast.Ident:
		return x.Name
	case *ast.MapType:
		return "map[" + exprString(x.Key) + "]" + exprString(x.Value)
	}
	return fmt.Sprintf("%T", e)
}

// friendlyType names a Go type the way a YAML author sees it.
func friendlyType(goType string) string {
	switch strings.TrimPrefix(goType, "*") {
	case "int", "int64", "uint64", "int32":
		return "integer"
	case "float64", "float32":
		return "number"
	case "string", "routing.Router", "roofline.DType", "roofline.MoEKernel", "roofline.SpecMethod", "Policy", "engine.AsyncMode":
		return "string"
	case "bool":
		return "true/false"
	case "BenchBlock":
		return "string or map of vllm bench serve arguments"
	case "Duration":
		return `duration ("30s", "500ms")`
	case "engine.Engine":
		return `string (name@version: "vllm@0.12.0")`
	case "[]string":
		return "list of strings"
	case "[]int":
		return "list of integers"
	}
	return goType
}

const schemaDocHead = `# Workload file reference

A workload file (` + "`sim run --workload W.yaml`" + `) is YAML. Its top level holds the
deployment settings (the same keys as ` + "`sim run`" + `'s flags: ` + "`--tp`" + ` is ` + "`tp`" + `,
` + "`--max-num-seqs`" + ` is ` + "`serving.max_num_seqs`" + `), the seed, and either ` + "`clients`" + ` or a
` + "`trace`" + `. Unknown keys are errors that name their line. The ` + "`examples/`" + ` directory
has complete files.

This page is generated from the Go structs (` + "`workload.Spec`" + ` and what it holds) by
` + "`go test ./workload -run TestWorkloadSchemaDoc -update-schema-doc`" + `; the same test fails when
the structs and this page differ, so it cannot drift. Defaults are those of
` + "`workload.DefaultDeployment`" + `; "—" means the key has no default (it is required where the
meaning says so, or unset).

`

// TestWorkloadSchemaDoc checks docs/workload.md against the structs.
func TestWorkloadSchemaDoc(t *testing.T) {
	got := []byte(schemaDocHead + schemaDoc(t))
	const path = "../docs/workload.md"
	if *updateSchemaDoc {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./workload -run TestWorkloadSchemaDoc -update-schema-doc writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/workload.md differs from the workload structs; regenerate it with go test ./workload -run TestWorkloadSchemaDoc -update-schema-doc")
	}
	for _, key := range []string{"`tp`", "`serving.max_num_seqs`", "`clients[].arrival.rate`", "`clients[].prompt_tokens`", "`dist`"} {
		if !bytes.Contains(got, []byte("| "+key+" |")) {
			t.Errorf("the reference lacks %s", key)
		}
	}
}

// No key of the page that has a default is called required: the default
// derives its value (serving.num_gpu_blocks 0 sizes the KV cache from
// memory, serving.max_model_len 0 takes the model's context).
func TestWorkloadDocRequiredOnlyWithoutDefault(t *testing.T) {
	for _, line := range strings.Split(schemaDoc(t), "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| `") || len(cells) < 4 {
			continue
		}
		if def := cells[2]; def != "—" && strings.Contains(cells[3], "Required") {
			t.Errorf("%s has default %s but is called required: %s", cells[0], def, cells[3])
		}
	}
	if got := fileMeaning("Blocks of KV. Required (> 0); the caller derives it.", "0 = derive", "0"); got != "Blocks of KV. In a workload file: 0 = derive." {
		t.Errorf("fileMeaning = %q", got)
	}
	if got := fileMeaning("Required (> 0).", "h", "—"); got != "Required (> 0)." {
		t.Errorf("a key without default keeps its Required: %q", got)
	}
}
