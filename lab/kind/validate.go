package kind

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// SplitYAML splits a multi-document YAML stream into non-empty documents.
func SplitYAML(b []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		var probe map[string]any
		if err := yaml.Unmarshal(doc, &probe); err != nil {
			return nil, err
		}
		if len(probe) > 0 {
			docs = append(docs, doc)
		}
	}
}

// StrictBuiltin decodes a document of a Kubernetes built-in kind strictly
// (unknown or duplicate fields are errors), as kubectl apply's field
// validation on the server would. ok is false for kinds client-go does not know.
func StrictBuiltin(doc []byte) (obj runtime.Object, ok bool, err error) {
	codecs := serializer.NewCodecFactory(clientgoscheme.Scheme, serializer.EnableStrict)
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(doc, &u.Object); err != nil {
		return nil, false, err
	}
	if !clientgoscheme.Scheme.Recognizes(u.GroupVersionKind()) {
		return nil, false, nil
	}
	obj, _, err = codecs.UniversalDeserializer().Decode(doc, nil, nil)
	return obj, true, err
}

// CRDValidator validates custom resources the way the API server does for a
// CRD version: unknown fields (pruning) and the OpenAPI schema.
type CRDValidator struct {
	Kind       string
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
}

// NewCRDValidator builds a validator for one version of a CRD manifest.
func NewCRDValidator(crdYAML []byte, version string) (*CRDValidator, error) {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(crdYAML, &crd); err != nil {
		return nil, fmt.Errorf("CRD: %w", err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name != version || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		internal := &apiextensionsinternal.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
			return nil, err
		}
		s, err := structuralschema.NewStructural(internal)
		if err != nil {
			return nil, fmt.Errorf("CRD %s %s: %w", crd.Name, version, err)
		}
		val, _, err := apiservervalidation.NewSchemaValidator(internal)
		if err != nil {
			return nil, err
		}
		return &CRDValidator{Kind: crd.Spec.Names.Kind, structural: s, validator: val}, nil
	}
	return nil, fmt.Errorf("CRD %s has no schema for version %s", crd.Name, version)
}

// Validate returns the errors of one custom resource document: fields the
// schema does not know (the API server would drop or, with strict field
// validation, refuse them) and schema violations.
func (v *CRDValidator) Validate(doc []byte) error {
	var obj map[string]any
	if err := yaml.Unmarshal(doc, &obj); err != nil {
		return err
	}
	var errs field.ErrorList
	pruned := runtime.DeepCopyJSON(obj)
	unknown := pruning.PruneWithOptions(pruned, v.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	for _, p := range unknown {
		errs = append(errs, field.Invalid(field.NewPath(p), nil, "field not declared in the schema"))
	}
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj, v.validator)...)
	if len(errs) == 0 {
		return nil
	}
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	return fmt.Errorf("%s: %s", v.Kind, strings.Join(msgs, "; "))
}
