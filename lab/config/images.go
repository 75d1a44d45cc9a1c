package config

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// DefaultUnpullableImages are the image prefixes the hermetic lab's members
// cannot pull: `fake/`, which Karmada's own e2e suite uses to make an
// application unhealthy (an ImageOverrider replaces the registry with "fake"),
// and registries that cannot exist (RFC 2606's .invalid top-level domain).
var DefaultUnpullableImages = []string{"fake/", "registry.invalid/", "docker.io/fake/"}

// ImagePullRule decides which container images the hermetic lab's members can
// "pull". kwok's controller stands in for kubelets and runs nothing, so the lab
// decides from the image reference alone: an image cannot be pulled when it
// starts with one of Unpullable, or when Pullable is not empty and it starts
// with none of Pullable. A pod with such an image goes through ErrImagePull to
// ImagePullBackOff and never becomes Ready (lab/manifests/kwok/pod-image-pull.yaml).
type ImagePullRule struct {
	// Unpullable: LAB_UNPULLABLE_IMAGES, comma-separated prefixes
	// (default DefaultUnpullableImages; "none" for no prefix).
	Unpullable []string
	// Pullable: LAB_PULLABLE_IMAGES, comma-separated prefixes; empty (the
	// default) means every registry not ruled out by Unpullable exists.
	Pullable []string
}

// imagePrefix is what a prefix may hold: the characters of an image
// reference, so a prefix can be quoted into jq and Go templates as it is.
var imagePrefix = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/:@-]*$`)

// loadImagePullRule reads LAB_UNPULLABLE_IMAGES and LAB_PULLABLE_IMAGES.
func loadImagePullRule() (ImagePullRule, error) {
	var r ImagePullRule
	var err error
	if r.Unpullable, err = imagePrefixes("LAB_UNPULLABLE_IMAGES", DefaultUnpullableImages); err != nil {
		return r, err
	}
	if r.Pullable, err = imagePrefixes("LAB_PULLABLE_IMAGES", nil); err != nil {
		return r, err
	}
	return r, nil
}

func imagePrefixes(key string, def []string) ([]string, error) {
	v := env(key, "")
	switch v {
	case "":
		return append([]string(nil), def...), nil
	case "none":
		return nil, nil
	}
	var out []string
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !imagePrefix.MatchString(p) {
			return nil, fmt.Errorf("%s: %q is not an image prefix (letters, digits and . _ / : @ - only, e.g. fake/ or registry.example.com/)", key, p)
		}
		out = append(out, p)
	}
	return out, nil
}

// CanPull tells whether a member of the hermetic lab can pull image.
func (r ImagePullRule) CanPull(image string) bool {
	if hasAnyPrefix(image, r.Unpullable) {
		return false
	}
	return len(r.Pullable) == 0 || hasAnyPrefix(image, r.Pullable)
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// PodJQ is a jq expression (kwok's Stage selectors) that is true when any
// container of the pod has an image the lab cannot pull.
func (r ImagePullRule) PodJQ() string {
	return "[.spec.containers[]?.image] | any(" + r.imageJQ() + ")"
}

// imageJQ is the negation of CanPull over `.`, an image reference.
func (r ImagePullRule) imageJQ() string {
	starts := func(ps []string) string {
		if len(ps) == 0 {
			return "false"
		}
		parts := make([]string, len(ps))
		for i, p := range ps {
			parts[i] = "startswith(" + quote(p) + ")"
		}
		return "(" + strings.Join(parts, " or ") + ")"
	}
	expr := starts(r.Unpullable)
	if len(r.Pullable) > 0 {
		expr = "(" + expr + " or (" + starts(r.Pullable) + " | not))"
	}
	return expr
}

// TemplateCond is a Go template condition (kwok's status templates, with
// sprig's hasPrefix) that is true when the image in variable v cannot be pulled.
func (r ImagePullRule) TemplateCond(v string) string {
	starts := func(ps []string) string {
		parts := []string{"false"}
		for _, p := range ps {
			parts = append(parts, "(hasPrefix "+quote(p)+" "+v+")")
		}
		return "(or " + strings.Join(parts, " ") + ")"
	}
	cond := starts(r.Unpullable)
	if len(r.Pullable) > 0 {
		cond = "(or " + cond + " (not " + starts(r.Pullable) + "))"
	}
	return cond
}

// Describe says the rule in a sentence, for logs and messages.
func (r ImagePullRule) Describe() string {
	s := "images starting with " + orNone(r.Unpullable) + " cannot be pulled"
	if len(r.Pullable) > 0 {
		s += "; only images starting with " + orNone(r.Pullable) + " exist"
	}
	return s
}

func orNone(ps []string) string {
	if len(ps) == 0 {
		return "(none)"
	}
	return strings.Join(ps, ", ")
}

// quote is a string literal that jq and Go templates both read back as s.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
