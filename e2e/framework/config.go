// Package framework is the e2e suite's small test framework, in the spirit of
// Cluster API's: a ClusterProxy per cluster built from the lab's kubeconfigs,
// scenarios as spec functions taking an input struct, named intervals from one
// config file, provider-specific fault injection behind one interface, and
// artifacts (resource dumps, logs, failover timelines) written on every run.
package framework

import (
	"fmt"
	"os"
	"time"

	"sigs.k8s.io/yaml"
)

// Config is e2e/config/e2e.yaml.
type Config struct {
	Intervals map[string][]string `json:"intervals"`
}

// LoadConfig reads and checks the e2e configuration.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &Config{}
	if err := yaml.UnmarshalStrict(b, c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for k, v := range c.Intervals {
		if len(v) != 2 {
			return nil, fmt.Errorf("%s: intervals[%s] wants [timeout, interval], got %v", path, k, v)
		}
		for _, d := range v {
			if _, err := time.ParseDuration(d); err != nil {
				return nil, fmt.Errorf("%s: intervals[%s]: %w", path, k, err)
			}
		}
	}
	return c, nil
}

// GetIntervals returns the timeout and polling interval of spec's key, or the
// default/<key> entry, as the arguments Gomega's Eventually takes.
func (c *Config) GetIntervals(spec, key string) []interface{} {
	v, ok := c.Intervals[spec+"/"+key]
	if !ok {
		v, ok = c.Intervals["default/"+key]
	}
	if !ok {
		panic(fmt.Sprintf("e2e config: no interval %s/%s or default/%s", spec, key, key))
	}
	timeout, _ := time.ParseDuration(v[0])
	interval, _ := time.ParseDuration(v[1])
	return []interface{}{timeout, interval}
}

// Timeout is the timeout of spec's key (see GetIntervals).
func (c *Config) Timeout(spec, key string) time.Duration {
	return c.GetIntervals(spec, key)[0].(time.Duration)
}

// Polling is the polling interval of spec's key (see GetIntervals).
func (c *Config) Polling(spec, key string) time.Duration {
	return c.GetIntervals(spec, key)[1].(time.Duration)
}
