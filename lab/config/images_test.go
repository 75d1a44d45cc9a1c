package config

import (
	"strings"
	"testing"
)

func TestImagePullRule(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		unpullable, pullable string
		can, cannot          []string
	}{
		{
			name:   "defaults: fake/ and the deny-list",
			can:    []string{"nginx:1.19.0", "registry.k8s.io/pause:3.10", "docker.io/library/nginx", "fakeregistry.io/app"},
			cannot: []string{"fake/nginx:1.19.0", "fake/library/nginx", "registry.invalid/app:1", "docker.io/fake/nginx"},
		},
		{
			name:       "none: every image exists",
			unpullable: "none",
			can:        []string{"fake/nginx:1.19.0", "nginx"},
		},
		{
			name:     "allow-list on top of the defaults",
			pullable: "registry.k8s.io/, ghcr.io/team/",
			can:      []string{"registry.k8s.io/pause:3.10", "ghcr.io/team/app:1"},
			cannot:   []string{"nginx", "ghcr.io/other/app", "fake/nginx"},
		},
		{
			name:       "custom deny-list",
			unpullable: "quay.io/gone/,example.invalid/",
			can:        []string{"fake/nginx", "quay.io/kept/app"},
			cannot:     []string{"quay.io/gone/app:2", "example.invalid/x"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("LAB_UNPULLABLE_IMAGES", tc.unpullable)
			t.Setenv("LAB_PULLABLE_IMAGES", tc.pullable)
			r, err := loadImagePullRule()
			if err != nil {
				t.Fatal(err)
			}
			for _, img := range tc.can {
				if !r.CanPull(img) {
					t.Errorf("%s: want pullable (%s)", img, r.Describe())
				}
			}
			for _, img := range tc.cannot {
				if r.CanPull(img) {
					t.Errorf("%s: want unpullable (%s)", img, r.Describe())
				}
			}
		})
	}
}

func TestImagePullRuleRejectsWhatCannotBeQuoted(t *testing.T) {
	for _, v := range []string{`fake/,"); halt`, "with space/", "{{ .x }}", "$(id)/"} {
		t.Setenv("LAB_UNPULLABLE_IMAGES", v)
		if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "LAB_UNPULLABLE_IMAGES") {
			t.Errorf("LAB_UNPULLABLE_IMAGES=%q: want an error naming the variable, got %v", v, err)
		}
	}
}

func TestImagePullRuleExpressions(t *testing.T) {
	r := ImagePullRule{Unpullable: []string{"fake/"}, Pullable: []string{"registry.k8s.io/"}}
	if got, want := r.PodJQ(), `[.spec.containers[]?.image] | any(((startswith("fake/")) or ((startswith("registry.k8s.io/")) | not)))`; got != want {
		t.Errorf("PodJQ:\n got %s\nwant %s", got, want)
	}
	if got, want := r.TemplateCond("$c.image"), `(or (or false (hasPrefix "fake/" $c.image)) (not (or false (hasPrefix "registry.k8s.io/" $c.image))))`; got != want {
		t.Errorf("TemplateCond:\n got %s\nwant %s", got, want)
	}
	if got := (ImagePullRule{}).PodJQ(); got != "[.spec.containers[]?.image] | any(false)" {
		t.Errorf("an empty rule must pull everything: %s", got)
	}
}
