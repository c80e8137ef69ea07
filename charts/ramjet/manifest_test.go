package ramjet_test

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// object is the part of a rendered object the tests look at.
type object struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"metadata"`
	Rules    []rule    `yaml:"rules"`
	RoleRef  roleRef   `yaml:"roleRef"`
	Subjects []subject `yaml:"subjects"`
	Spec     struct {
		ControllerName string `yaml:"controllerName"`
		Selector       struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Template struct {
			Spec struct {
				Containers []struct {
					Name string   `yaml:"name"`
					Args []string `yaml:"args"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// rule is a PolicyRule of a Role or ClusterRole.
type rule struct {
	APIGroups     []string `yaml:"apiGroups"`
	Resources     []string `yaml:"resources"`
	ResourceNames []string `yaml:"resourceNames"`
	Verbs         []string `yaml:"verbs"`
}

type roleRef struct {
	Kind string `yaml:"kind"`
	Name string `yaml:"name"`
}

type subject struct {
	Kind      string `yaml:"kind"`
	Name      string `yaml:"name"`
	Namespace string `yaml:"namespace"`
}

// key names an object: kind, namespace and name.
func (o object) key() string { return o.Kind + " " + o.Metadata.Namespace + "/" + o.Metadata.Name }

// objects decodes the documents of a manifest, leaving out empty ones.
func objects(t *testing.T, manifest string) []object {
	t.Helper()
	dec := yaml.NewDecoder(strings.NewReader(manifest))
	var out []object
	for {
		var o object
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("decoding the manifest: %v", err)
		}
		if o.Kind != "" {
			out = append(out, o)
		}
	}
}

// ofKind returns the objects of a kind.
func ofKind(objs []object, kind string) []object {
	var out []object
	for _, o := range objs {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

// permissions expands the rules of the Roles and ClusterRoles into one
// "SCOPE GROUP RESOURCE[/NAME] VERB" line per permission (SCOPE is
// "cluster" or the Role's namespace), sorted, so that two ways of writing
// the same rules compare equal.
func permissions(objs []object) []string {
	var out []string
	for _, o := range objs {
		scope := o.Metadata.Namespace
		switch o.Kind {
		case "ClusterRole":
			scope = "cluster"
		case "Role":
		default:
			continue
		}
		for _, r := range o.Rules {
			names := r.ResourceNames
			if len(names) == 0 {
				names = []string{""}
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, n := range names {
						for _, v := range r.Verbs {
							target := res
							if n != "" {
								target += "/" + n
							}
							out = append(out, scope+" "+g+" "+target+" "+v)
						}
					}
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// controllerArgs returns the arguments of the controller container of the
// workload.
func controllerArgs(t *testing.T, objs []object) []string {
	t.Helper()
	for _, o := range objs {
		if o.Kind != "Deployment" && o.Kind != "DaemonSet" {
			continue
		}
		for _, c := range o.Spec.Template.Spec.Containers {
			if c.Name == "controller" {
				return c.Args
			}
		}
	}
	t.Fatal("no controller container in the manifest")
	return nil
}
