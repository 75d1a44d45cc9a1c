// Package kubeconfig writes and merges the lab's kubeconfig files with client-go's clientcmd.
package kubeconfig

import (
	"os"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Write writes a kubeconfig with one cluster, user and context named
// name, embedding the CA and client certificate so the file can be copied.
func Write(path, name, server, caFile, certFile, keyFile string) error {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	crt, err := os.ReadFile(certFile)
	if err != nil {
		return err
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	return clientcmd.WriteToFile(*cfg, path)
}

// MergeContext copies context from the kubeconfig at src into the kubeconfig at
// dst under the name as (cluster, user and context all named as), flattening
// file references into data, and replaces an entry of that name.
func MergeContext(dst, src, context, as string) error {
	in, err := clientcmd.LoadFromFile(src)
	if err != nil {
		return err
	}
	if err := clientcmdapi.FlattenConfig(in); err != nil {
		return err
	}
	ctx, ok := in.Contexts[context]
	if !ok {
		// kwokctl writes one context per cluster file; take it whatever its name.
		for _, c := range in.Contexts {
			ctx = c
		}
	}
	if ctx == nil {
		return os.ErrNotExist
	}
	out := clientcmdapi.NewConfig()
	if existing, err := clientcmd.LoadFromFile(dst); err == nil {
		out = existing
	}
	out.Clusters[as] = in.Clusters[ctx.Cluster]
	out.AuthInfos[as] = in.AuthInfos[ctx.AuthInfo]
	out.Contexts[as] = &clientcmdapi.Context{Cluster: as, AuthInfo: as}
	if out.CurrentContext == "" {
		out.CurrentContext = as
	}
	return clientcmd.WriteToFile(*out, dst)
}

// RemoveContext drops name from the kubeconfig at path, if the file exists.
func RemoveContext(path, name string) error {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	delete(cfg.Clusters, name)
	delete(cfg.AuthInfos, name)
	delete(cfg.Contexts, name)
	if cfg.CurrentContext == name {
		cfg.CurrentContext = ""
	}
	return clientcmd.WriteToFile(*cfg, path)
}
