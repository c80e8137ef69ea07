package harness

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ramjet-dev/ramjet/test/harness/internal/container"
)

// Modes of volume files and folders, as kubelet gives them.
const (
	defaultFileMode = 0o644
	emptyDirMode    = 0o777
	// groupReadable is what an fsGroup adds to the files of the volumes
	// kubelet mounts read-only (configMap, secret, projected, downwardAPI).
	groupReadable = 0o440
)

// Volume kinds the pod runner supports.
const (
	kindEmptyDir    = "emptyDir"
	kindConfigMap   = "configMap"
	kindSecret      = "secret"
	kindProjected   = "projected"
	kindDownwardAPI = "downwardAPI"
)

// podVolume is one of a pod's volumes as the runner keeps it: a folder on
// the host, bind-mounted into the containers that mount the volume.
type podVolume struct {
	name, kind, dir string
	// readOnly is set for the kinds kubelet always mounts read-only.
	readOnly bool
}

// volumeFile is a file of a configMap, secret, projected or downwardAPI
// volume: its path in the volume, content and mode.
type volumeFile struct {
	path string
	data []byte
	mode os.FileMode
}

// tokenFunc returns a token of the pod's service account for audience
// (empty: the API server's) valid for expiration seconds.
type tokenFunc func(audience string, expiration int64) (string, error)

// planVolumes checks the pod's volumes and gives each a folder under dir.
// A kind of volume the harness does not run is an error naming it.
func planVolumes(pod *corev1.Pod, dir string) (map[string]*podVolume, error) {
	vols := map[string]*podVolume{}
	var errs []error
	for i, v := range pod.Spec.Volumes {
		kind, err := volumeKind(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("spec.volumes[%d] (%s): %w", i, v.Name, err))
			continue
		}
		vols[v.Name] = &podVolume{
			name: v.Name, kind: kind, dir: volumeDir(dir, v.Name),
			readOnly: kind != kindEmptyDir,
		}
	}
	return vols, errors.Join(errs...)
}

// volumeKind returns the kind of v, or an error naming the kind the
// harness does not support.
func volumeKind(v corev1.Volume) (string, error) {
	switch s := v.VolumeSource; {
	case s.EmptyDir != nil:
		return kindEmptyDir, nil
	case s.ConfigMap != nil:
		return kindConfigMap, nil
	case s.Secret != nil:
		return kindSecret, nil
	case s.Projected != nil:
		return kindProjected, nil
	case s.DownwardAPI != nil:
		return kindDownwardAPI, nil
	}
	return "", fmt.Errorf("%s volumes are not supported by the harness (it runs emptyDir, configMap, secret, projected and downwardAPI)",
		setField(v.VolumeSource))
}

// setField returns the JSON name of the first non-nil field of the struct
// v, e.g. "hostPath" of a VolumeSource, or "no" when none is set.
func setField(v any) string {
	rv := reflect.ValueOf(v)
	for i := range rv.NumField() {
		if f := rv.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			name, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("json"), ",")
			return name
		}
	}
	return "no"
}

// volumeFiles returns the files of a configMap, secret, projected or
// downwardAPI volume (field is where it is, e.g. "spec.volumes[2]").
func volumeFiles(pod *corev1.Pod, v *corev1.Volume, field string, in *podInputs, token tokenFunc) ([]volumeFile, error) {
	s := v.VolumeSource
	switch {
	case s.ConfigMap != nil:
		c := s.ConfigMap
		return keyFiles(kindConfigMap, c.Name, c.Items, c.DefaultMode, c.Optional, configMapData(in.configMaps[c.Name]), field+".configMap")
	case s.Secret != nil:
		c := s.Secret
		return keyFiles(kindSecret, c.SecretName, c.Items, c.DefaultMode, c.Optional, secretData(in.secrets[c.SecretName]), field+".secret")
	case s.DownwardAPI != nil:
		return downwardFiles(pod, s.DownwardAPI.Items, s.DownwardAPI.DefaultMode, field+".downwardAPI")
	case s.Projected != nil:
		return projectedFiles(pod, s.Projected, in, token, field+".projected")
	}
	return nil, nil
}

// keyFiles returns a file for each key of data (nil: the object does not
// exist), or for each of items when given.
func keyFiles(kind, name string, items []corev1.KeyToPath, defaultMode *int32, optional *bool, data map[string][]byte, field string) ([]volumeFile, error) {
	if data == nil {
		if optional != nil && *optional {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: %s %q not found", field, kind, name)
	}
	mode := fileMode(defaultMode, nil)
	if len(items) == 0 {
		var files []volumeFile
		for _, k := range slices.Sorted(maps.Keys(data)) {
			files = append(files, volumeFile{path: k, data: data[k], mode: mode})
		}
		return files, nil
	}
	var files []volumeFile
	for i, it := range items {
		value, ok := data[it.Key]
		if !ok {
			if optional != nil && *optional {
				continue
			}
			return nil, fmt.Errorf("%s.items[%d]: key %q not found in %s %q", field, i, it.Key, kind, name)
		}
		files = append(files, volumeFile{path: it.Path, data: value, mode: fileMode(defaultMode, it.Mode)})
	}
	return files, nil
}

// downwardFiles returns the files of downward API items.
func downwardFiles(pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile, defaultMode *int32, field string) ([]volumeFile, error) {
	var files []volumeFile
	for i, it := range items {
		if it.FieldRef == nil {
			return nil, fmt.Errorf("%s.items[%d]: only fieldRef is supported by the harness (it enforces no resources)", field, i)
		}
		value, err := podField(pod, it.FieldRef.FieldPath)
		if err != nil {
			return nil, fmt.Errorf("%s.items[%d]: %w", field, i, err)
		}
		files = append(files, volumeFile{path: it.Path, data: []byte(value), mode: fileMode(defaultMode, it.Mode)})
	}
	return files, nil
}

// projectedFiles returns the files of a projected volume's sources.
func projectedFiles(pod *corev1.Pod, p *corev1.ProjectedVolumeSource, in *podInputs, token tokenFunc, field string) ([]volumeFile, error) {
	var files []volumeFile
	for i, src := range p.Sources {
		at := fmt.Sprintf("%s.sources[%d]", field, i)
		var more []volumeFile
		var err error
		switch {
		case src.ServiceAccountToken != nil:
			more, err = tokenFile(src.ServiceAccountToken, p.DefaultMode, token, at)
		case src.ConfigMap != nil:
			c := src.ConfigMap
			more, err = keyFiles(kindConfigMap, c.Name, c.Items, p.DefaultMode, c.Optional, configMapData(in.configMaps[c.Name]), at+".configMap")
		case src.Secret != nil:
			c := src.Secret
			more, err = keyFiles(kindSecret, c.Name, c.Items, p.DefaultMode, c.Optional, secretData(in.secrets[c.Name]), at+".secret")
		case src.DownwardAPI != nil:
			more, err = downwardFiles(pod, src.DownwardAPI.Items, p.DefaultMode, at+".downwardAPI")
		default:
			err = fmt.Errorf("%s: %s sources are not supported by the harness", at, setField(src))
		}
		if err != nil {
			return nil, err
		}
		files = append(files, more...)
	}
	return files, nil
}

// tokenFile returns the file of a serviceAccountToken source: a token
// from the TokenRequest API, for its audience and expiration.
func tokenFile(s *corev1.ServiceAccountTokenProjection, defaultMode *int32, token tokenFunc, field string) ([]volumeFile, error) {
	expiration := int64(3600)
	if s.ExpirationSeconds != nil {
		expiration = *s.ExpirationSeconds
	}
	t, err := token(s.Audience, expiration)
	if err != nil {
		return nil, fmt.Errorf("%s.serviceAccountToken: %w", field, err)
	}
	return []volumeFile{{path: s.Path, data: []byte(t), mode: fileMode(defaultMode, nil)}}, nil
}

// fileMode is an item's mode, else the volume's default mode, else 0644.
func fileMode(defaultMode, mode *int32) os.FileMode {
	switch {
	case mode != nil:
		return os.FileMode(*mode)
	case defaultMode != nil:
		return os.FileMode(*defaultMode)
	}
	return defaultFileMode
}

// writeVolume writes files into dir as kubelet's atomic writer lays them
// out: the files in a timestamped folder, a "..data" link to it, and a
// link for each top-level name. With an fsGroup the files and folders
// belong to that group and are readable by it.
func writeVolume(dir string, files []volumeFile, fsGroup *int64) error {
	stamp := time.Now().UTC().Format("..2006_01_02_15_04_05.000000000")
	data := filepath.Join(dir, stamp)
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	top := map[string]bool{}
	for _, f := range files {
		full := filepath.Join(data, f.path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, f.data, 0o600); err != nil {
			return err
		}
		if err := own(full, f.mode, fsGroup, groupReadable); err != nil {
			return err
		}
		top[strings.SplitN(path.Clean(f.path), "/", 2)[0]] = true
	}
	if err := os.Symlink(stamp, filepath.Join(dir, "..data")); err != nil {
		return err
	}
	for name := range top {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return own(p, 0o755, fsGroup, os.ModeSetgid|0o550)
	})
}

// makeEmptyDir creates an emptyDir volume's folder: mode 0777, with an
// fsGroup owned by that group and set-group-ID, as kubelet makes it.
func makeEmptyDir(dir string, fsGroup *int64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return own(dir, emptyDirMode, fsGroup, os.ModeSetgid)
}

// makeSubPaths creates the subPath folders the containers mount of
// emptyDir volumes, like their volume's folder, as kubelet creates them.
func makeSubPaths(pod *corev1.Pod, vols map[string]*podVolume, fsGroup *int64) error {
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		for _, vm := range c.VolumeMounts {
			v := vols[vm.Name]
			if v == nil || v.kind != kindEmptyDir || vm.SubPath == "" {
				continue
			}
			if err := makeEmptyDir(filepath.Join(v.dir, vm.SubPath), fsGroup); err != nil {
				return err
			}
		}
	}
	return nil
}

// own sets the mode of p, and with an fsGroup its group and the bits the
// group gets (extra).
func own(p string, mode os.FileMode, fsGroup *int64, extra os.FileMode) error {
	if fsGroup != nil {
		if err := os.Chown(p, 0, int(*fsGroup)); err != nil {
			return err
		}
		mode |= extra
	}
	return os.Chmod(p, mode)
}

// podFiles are the files kubelet and the runtime give every container of
// a pod, on the host.
type podFiles struct {
	hosts, hostname, resolvConf string
}

// containerMounts returns the bind mounts of container c (at field),
// parents before children: the image's files (read-only), the pod's
// /etc/hosts, /etc/hostname and /etc/resolv.conf, the termination log
// (termination, on the host) and the volume mounts.
func containerMounts(c *corev1.Container, field string, img Image, vols map[string]*podVolume, files podFiles, termination string) ([]container.Mount, error) {
	readOnlyRoot := c.SecurityContext != nil && c.SecurityContext.ReadOnlyRootFilesystem != nil && *c.SecurityContext.ReadOnlyRootFilesystem
	var mounts []container.Mount
	for target, source := range img.Files {
		mounts = append(mounts, container.Mount{Source: source, Target: target, ReadOnly: true})
	}
	mounts = append(mounts,
		container.Mount{Source: files.hosts, Target: "/etc/hosts", ReadOnly: readOnlyRoot},
		container.Mount{Source: files.hostname, Target: "/etc/hostname", ReadOnly: readOnlyRoot},
		container.Mount{Source: files.resolvConf, Target: "/etc/resolv.conf", ReadOnly: readOnlyRoot},
	)
	if c.TerminationMessagePath != "" {
		mounts = append(mounts, container.Mount{Source: termination, Target: c.TerminationMessagePath})
	}
	var errs []error
	for i, vm := range c.VolumeMounts {
		m, err := volumeMount(vm, vols)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.volumeMounts[%d] (%s): %w", field, i, vm.Name, err))
			continue
		}
		mounts = append(mounts, m)
	}
	for _, m := range mounts {
		if !path.IsAbs(m.Target) || path.Clean(m.Target) != m.Target {
			errs = append(errs, fmt.Errorf("%s: mount path %q is not a clean absolute path", field, m.Target))
		}
	}
	slices.SortStableFunc(mounts, func(a, b container.Mount) int {
		if d := strings.Count(a.Target, "/") - strings.Count(b.Target, "/"); d != 0 {
			return d
		}
		return strings.Compare(a.Target, b.Target)
	})
	return mounts, errors.Join(errs...)
}

// volumeMount returns the bind mount of one volumeMount.
func volumeMount(vm corev1.VolumeMount, vols map[string]*podVolume) (container.Mount, error) {
	v := vols[vm.Name]
	switch {
	case v == nil:
		return container.Mount{}, errors.New("the pod has no such volume")
	case vm.SubPathExpr != "":
		return container.Mount{}, fmt.Errorf("subPathExpr: %w", errUnsupported)
	case vm.MountPropagation != nil && *vm.MountPropagation != corev1.MountPropagationNone:
		return container.Mount{}, fmt.Errorf("mountPropagation %s: %w", *vm.MountPropagation, errUnsupported)
	case vm.RecursiveReadOnly != nil && *vm.RecursiveReadOnly == corev1.RecursiveReadOnlyEnabled:
		return container.Mount{}, fmt.Errorf("recursiveReadOnly Enabled: %w", errUnsupported)
	case strings.HasPrefix(vm.SubPath, "/") || slices.Contains(strings.Split(vm.SubPath, "/"), ".."):
		return container.Mount{}, fmt.Errorf("subPath %q: must be a relative path that does not climb with \"..\"", vm.SubPath)
	}
	return container.Mount{
		Source:   filepath.Join(v.dir, vm.SubPath),
		Target:   vm.MountPath,
		ReadOnly: vm.ReadOnly || v.readOnly,
	}, nil
}
