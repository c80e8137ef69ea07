package registry

import (
	"fmt"
	"strings"
)

// Selection is the set of enabled families.
type Selection struct {
	enabled map[string]bool
}

// Select parses --annotations: "all", "all,-cors" (all but cors),
// "rewrite,cors" (only those). Unknown names are an error listing the
// valid ones.
func Select(spec string) (Selection, error) {
	all := Families()
	valid := make(map[string]bool, len(all))
	for _, f := range all {
		valid[f.Name] = true
	}
	sel := Selection{enabled: map[string]bool{}}
	for i, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "all" && i == 0:
			for name := range valid {
				sel.enabled[name] = true
			}
		case strings.HasPrefix(item, "-") && valid[item[1:]]:
			delete(sel.enabled, item[1:])
		case valid[item]:
			sel.enabled[item] = true
		default:
			names := make([]string, 0, len(all))
			for _, f := range all {
				names = append(names, f.Name)
			}
			return Selection{}, fmt.Errorf("--annotations: %q is not a family (\"all\" must come first; -name removes one); the families are %s",
				item, strings.Join(names, ", "))
		}
	}
	return sel, nil
}

// All enables every registered family.
func All() Selection {
	sel, _ := Select("all")
	return sel
}

// Enabled reports whether a family is enabled.
func (s Selection) Enabled(family string) bool { return s.enabled[family] }

// SelectInputs checks --ingress and --gateway-api (by input name): at
// least one input must be on.
func SelectInputs(on map[string]bool) error {
	for _, in := range Inputs() {
		if on[in.Name] {
			return nil
		}
	}
	return fmt.Errorf("no input is enabled: at least one of --ingress and --gateway-api must be on")
}
