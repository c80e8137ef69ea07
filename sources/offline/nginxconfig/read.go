package nginxconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
)

// Read finds the data of ingress-nginx's controller ConfigMap in a file:
// the ConfigMap itself (alone, in a multi-document file or in a List, as
// kubectl get -o yaml prints it), or the values of ingress-nginx's Helm
// chart, whose controller.config the chart writes into that ConfigMap.
// name says where the data is read from, for errors.
func Read(name string, data []byte) (map[string]string, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var found []source
	for i := 1; ; i++ {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s document %d: not YAML or JSON: %v", name, i, err)
		}
		found = append(found, sourcesOf(fmt.Sprintf("%s document %d", name, i), doc)...)
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("%s holds no ConfigMap and no ingress-nginx chart values with controller.config", name)
	case 1:
		return found[0].data()
	}
	var names []string
	for _, s := range found {
		names = append(names, s.where)
	}
	return nil, fmt.Errorf("%s holds %d ConfigMaps (%s): give a file with the controller's ConfigMap only", name, len(found), strings.Join(names, ", "))
}

// source is one place controller settings were found.
type source struct {
	where string
	// strict: a ConfigMap's values must be strings, as Kubernetes wants;
	// the chart's are any scalar, which it quotes.
	strict bool
	values map[string]any
}

// sourcesOf finds the ConfigMaps, or the chart's controller.config, of one
// document.
func sourcesOf(where string, doc map[string]any) []source {
	switch doc["kind"] {
	case "ConfigMap":
		meta, _ := doc["metadata"].(map[string]any)
		ns, _ := meta["namespace"].(string)
		n, _ := meta["name"].(string)
		data, _ := doc["data"].(map[string]any)
		return []source{{where: fmt.Sprintf("%s: ConfigMap %s/%s", where, ns, n), strict: true, values: data}}
	case "List":
		items, _ := doc["items"].([]any)
		var out []source
		for i, item := range items {
			if m, ok := item.(map[string]any); ok {
				out = append(out, sourcesOf(fmt.Sprintf("%s item %d", where, i+1), m)...)
			}
		}
		return out
	case nil:
		controller, _ := doc["controller"].(map[string]any)
		if cfg, ok := controller["config"].(map[string]any); ok {
			return []source{{where: where + ": chart values controller.config", values: cfg}}
		}
	}
	return nil
}

// data gives the settings as the ConfigMap's strings.
func (s source) data() (map[string]string, error) {
	out := make(map[string]string, len(s.values))
	for k, v := range s.values {
		switch v := v.(type) {
		case string:
			out[k] = v
		case map[string]any, []any, nil:
			return nil, fmt.Errorf("%s: %s is not a string", s.where, quote(k))
		default:
			if s.strict {
				return nil, fmt.Errorf("%s: %s is not a string: Kubernetes wants ConfigMap values quoted", s.where, quote(k))
			}
			out[k] = fmt.Sprint(v)
		}
	}
	return out, nil
}
