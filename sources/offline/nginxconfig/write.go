package nginxconfig

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Write prints the result: "text" is a values file for the chart (helm
// install -f), with what became of each key as comments; "yaml" and
// "json" are the Result.
func (res *Result) Write(w io.Writer, format string) error {
	switch format {
	case "text":
		return res.writeValues(w)
	case "yaml":
		return yaml.NewEncoder(w).Encode(res)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return fmt.Errorf("--output: %q is not text, yaml or json", format)
}

func (res *Result) writeValues(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# Ramjet chart values with the settings of ingress-nginx's controller ConfigMap\n")
	b.WriteString("# (ramjet-ingress translate --nginx-configmap); what became of each key is below.\n")
	if len(res.Values) > 0 {
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(res.Values); err != nil {
			return err
		}
	} else {
		b.WriteString("{}\n")
	}
	for _, status := range []Status{Mapped, Same, NoCounterpart, Invalid, Unknown} {
		res.writeKeys(&b, status)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// headings introduce the keys of each status in the text output.
var headings = map[Status]string{
	Mapped:        "Keys carried over into the values above:",
	Same:          "Keys whose value is what Ramjet does anyway (nothing to set):",
	NoCounterpart: "Keys without a counterpart in Ramjet, and what happens instead:",
	Invalid:       "Keys whose value ingress-nginx would not take either (nothing set):",
	Unknown:       "Keys ingress-nginx does not have:",
}

func (res *Result) writeKeys(b *strings.Builder, status Status) {
	first := true
	for _, k := range res.Keys {
		if k.Status != status {
			continue
		}
		if first {
			fmt.Fprintf(b, "#\n# %s\n", headings[status])
			first = false
		}
		line := keyName(k.Key)
		var to []string
		for _, s := range k.Settings {
			to = append(to, s.Path)
		}
		if len(to) > 0 {
			line += " -> " + strings.Join(to, ", ")
		}
		if k.Note != "" {
			line += ": " + k.Note
		}
		fmt.Fprintf(b, "#   %s\n", oneLine.Replace(line))
	}
}

// oneLine keeps a line of the comments on its line, whatever a value held.
var oneLine = strings.NewReplacer("\n", `\n`, "\r", `\r`)

// plainKey is what a ConfigMap key may be made of; any other key is
// shown quoted, so that it cannot end the comment it stands in.
var plainKey = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

func keyName(k string) string {
	if plainKey.MatchString(k) {
		return k
	}
	return quote(k)
}
