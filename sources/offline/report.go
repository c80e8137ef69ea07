package offline

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"gopkg.in/yaml.v3"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/sources"
)

// Report is the machine-readable outcome of a translation.
type Report struct {
	Config *config.Config `json:"config" yaml:"config"`
	// Files are the names of the generated files; their content
	// (certificates, keys) is only written with --out.
	Files   []string       `json:"files,omitempty" yaml:"files,omitempty"`
	Objects []ObjectReport `json:"objects" yaml:"objects"`
	// GatewayConditions are the conditions of the Gateway API statuses
	// that say an object is not served as written (see NotAsWritten);
	// none without --gateway-api.
	GatewayConditions []ConditionReport `json:"gatewayConditions,omitempty" yaml:"gatewayConditions,omitempty"`
	Ignored           []string          `json:"ignored,omitempty" yaml:"ignored,omitempty"`
	Problems          []string          `json:"problems,omitempty" yaml:"problems,omitempty"`
	Warnings          []string          `json:"warnings,omitempty" yaml:"warnings,omitempty"`
	// Unreadable are the documents that could not be read (see
	// Notes.Unreadable): what they hold is not translated.
	Unreadable []string `json:"unreadable,omitempty" yaml:"unreadable,omitempty"`
}

// ObjectReport is one translated object.
type ObjectReport struct {
	Kind      string          `json:"kind" yaml:"kind"`
	Namespace string          `json:"namespace" yaml:"namespace"`
	Name      string          `json:"name" yaml:"name"`
	State     core.State      `json:"state" yaml:"state"`
	Findings  []FindingReport `json:"findings,omitempty" yaml:"findings,omitempty"`
}

// FindingReport is one finding of an object.
type FindingReport struct {
	Reason  core.Reason `json:"reason" yaml:"reason"`
	Message string      `json:"message" yaml:"message"`
}

// NewReport collects the outcome of a translation of what Read read.
func NewReport(out *sources.Output, notes Notes) *Report {
	r := &Report{Config: out.Config, Problems: out.Problems, Warnings: notes.Warnings, Unreadable: notes.Unreadable,
		GatewayConditions: gatewayConditions(out)}
	for name := range out.Files {
		r.Files = append(r.Files, name)
	}
	slices.Sort(r.Files)
	byObject := map[core.Origin]*ObjectReport{}
	for origin, state := range out.Objects {
		byObject[origin] = &ObjectReport{Kind: origin.Kind, Namespace: origin.Namespace, Name: origin.Name, State: state}
	}
	for _, f := range out.Findings {
		o := byObject[f.Object]
		if o == nil {
			r.Problems = append(r.Problems, f.Message)
			continue
		}
		o.Findings = append(o.Findings, FindingReport{Reason: f.Reason, Message: f.Message})
	}
	for _, o := range byObject {
		r.Objects = append(r.Objects, *o)
	}
	slices.SortFunc(r.Objects, func(a, b ObjectReport) int {
		// An Ingress and an HTTPRoute may share a name: the kind breaks
		// the tie, so the report does not depend on map order.
		return cmp.Or(strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name), strings.Compare(a.Kind, b.Kind))
	})
	for _, ig := range out.Ignored {
		r.Ignored = append(r.Ignored, fmt.Sprintf("%s: %s", ig.Object, ig.Reason))
	}
	return r
}

// NotAsWritten reports whether the input is not served as written: a
// document could not be read, an object is not served or has a finding
// other than ServiceNotFound, NoEndpoints and AddressRefused (which are
// about the cluster's state, its Services and EndpointSlices, not about how
// the object is written), or a Gateway API status has a condition in
// GatewayConditions: Accepted, ResolvedRefs or Programmed False,
// PartiallyInvalid True, or a type ending in Conflicted True. A Programmed
// False with reason AddressNotAssigned (and a listener's Pending) does not
// count: offline no address is known, and the address is the cluster's
// state, like ServiceNotFound. `translate --check` exits 1 then.
func (r *Report) NotAsWritten() bool {
	if len(r.Unreadable) > 0 || len(r.GatewayConditions) > 0 {
		return true
	}
	for _, o := range r.Objects {
		if o.State != core.Served {
			return true
		}
		for _, f := range o.Findings {
			if f.Reason != core.ServiceNotFound && f.Reason != core.NoEndpoints && f.Reason != core.AddressRefused {
				return true
			}
		}
	}
	return false
}

// Write prints the report as "text" (for a person), "yaml" or "json".
func (r *Report) Write(w io.Writer, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case "yaml":
		enc := yaml.NewEncoder(w)
		enc.SetIndent(2)
		return enc.Encode(r)
	case "text":
		return r.writeText(w)
	}
	return fmt.Errorf("--output %q: want text, yaml or json", format)
}

// writeText prints the generated ramjet.yaml, then, last so that it is
// what the terminal shows, the state of every object and its findings.
func (r *Report) writeText(w io.Writer) error {
	fmt.Fprintln(w, "# The ramjet.yaml Ramjet would serve:")
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(r.Config); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, list := range []struct {
		title string
		lines []string
	}{
		{"Warnings about the input", r.Warnings},
		{"Documents that could not be read (not translated; --check fails)", r.Unreadable},
		{"Problems of the flags' objects", r.Problems},
		{"Not this controller's (their class does not exist)", r.Ignored},
	} {
		if len(list.lines) > 0 {
			fmt.Fprintf(w, "%s:\n", list.title)
			for _, l := range list.lines {
				fmt.Fprintf(w, "  %s\n", l)
			}
			fmt.Fprintln(w)
		}
	}
	return r.writeObjects(w)
}

func (r *Report) writeObjects(w io.Writer) error {
	served := 0
	for _, o := range r.Objects {
		if o.State == core.Served {
			served++
		}
	}
	fmt.Fprintf(w, "%d objects: %d served, %d not served", len(r.Objects), served, len(r.Objects)-served)
	switch n := len(r.Unreadable); n {
	case 0:
	case 1:
		fmt.Fprint(w, "; 1 document could not be read")
	default:
		fmt.Fprintf(w, "; %d documents could not be read", n)
	}
	fmt.Fprint(w, ".\n\n")
	if err := r.writeObjectTable(w); err != nil {
		return err
	}
	return r.writeGatewayConditions(w)
}

func (r *Report) writeObjectTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "OBJECT\tSTATE\tREASON\tMESSAGE")
	for _, o := range r.Objects {
		name := o.Kind + " " + o.Namespace + "/" + o.Name
		state := string(o.State)
		if o.State != core.Served {
			state = "NOT SERVED"
		}
		if len(o.Findings) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t\t\n", name, state)
		}
		for i, f := range o.Findings {
			if i > 0 {
				name, state = "", ""
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, state, f.Reason, f.Message)
		}
	}
	return tw.Flush()
}

// writeGatewayConditions prints the Gateway API conditions that say an
// object is not served as written, after the objects; nothing when there
// are none.
func (r *Report) writeGatewayConditions(w io.Writer) error {
	if len(r.GatewayConditions) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nGateway API conditions (--check fails):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "OBJECT\tWHERE\tCONDITION\tREASON\tMESSAGE")
	for _, c := range r.GatewayConditions {
		name := c.Kind + " " + quoteUnusual(c.Name)
		if c.Namespace != "" {
			name = c.Kind + " " + quoteUnusual(c.Namespace) + "/" + quoteUnusual(c.Name)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, c.Where, c.Type+"="+c.Status, c.Reason, c.Message)
	}
	return tw.Flush()
}

// WriteFiles writes the generated files into dir with mode 0600, named by
// their content's digest.
func WriteFiles(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for name, content := range files {
		if err := writePrivate(filepath.Join(dir, name), content); err != nil {
			return err
		}
	}
	return nil
}

// writePrivate writes a file readable by its owner only, narrowing the
// mode of a file that already exists before its content is replaced.
func writePrivate(path string, content []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(content); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
