package ramjet_test

import (
	"fmt"
	"os"
	"slices"
	"testing"
)

// harnessPod is the pod runner's hand-kept copy of an ingress pod of the
// chart (release ingress in namespace ingress, default values).
const harnessPod = "../../test/harness/testdata/ramjet-pod.yaml"

// TestHarnessPodRBAC keeps the RBAC of the pod runner's copy equal to the
// chart's with its default values: the same Roles, ClusterRoles and
// bindings by name, granting the same permissions to the same subjects.
func TestHarnessPodRBAC(t *testing.T) {
	out, err := render(t, []string{valuesFile("default")})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(harnessPod)
	if err != nil {
		t.Fatal(err)
	}
	want, got := rbacOf(objects(t, out)), rbacOf(objects(t, string(data)))
	for _, line := range want {
		if !slices.Contains(got, line) {
			t.Errorf("%s lacks the chart's %s", harnessPod, line)
		}
	}
	for _, line := range got {
		if !slices.Contains(want, line) {
			t.Errorf("%s has %s, which the chart does not", harnessPod, line)
		}
	}
}

// rbacOf describes the RBAC objects of a manifest, one line per
// permission of a role and per subject of a binding.
func rbacOf(objs []object) []string {
	var out []string
	for _, o := range objs {
		switch o.Kind {
		case "ClusterRole", "Role":
			for _, p := range permissions([]object{o}) {
				out = append(out, fmt.Sprintf("%s grants %s", o.key(), p))
			}
		case "ClusterRoleBinding", "RoleBinding":
			for _, s := range o.Subjects {
				out = append(out, fmt.Sprintf("%s binds %s %s to %s %s/%s", o.key(), o.RoleRef.Kind, o.RoleRef.Name, s.Kind, s.Namespace, s.Name))
			}
		}
	}
	slices.Sort(out)
	return out
}
