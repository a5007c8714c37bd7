package apiserver

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A definition whose schemas and names did not change keeps its compiled
// versions (a caBundle written into its conversion webhook); one whose
// schema changed is compiled again.
func TestCompiledDefinitionsReused(t *testing.T) {
	def := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com", UID: "u1", Generation: 1},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", XValidations: apiextensionsv1.ValidationRules{{Rule: "has(self.size)"}},
						Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "integer"}}}}}}}}},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{AcceptedNames: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"}},
	}
	s := &Server{}
	first, err := s.compile(def)
	if err != nil || len(first) != 1 {
		t.Fatalf("compile: %v, %d versions", err, len(first))
	}
	withBundle := def.DeepCopy()
	withBundle.Generation = 2
	withBundle.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{ClientConfig: &apiextensionsv1.WebhookClientConfig{CABundle: []byte("ca")}, ConversionReviewVersions: []string{"v1"}}}
	again, err := s.compile(withBundle)
	if err != nil || len(again) != 1 || again[0] != first[0] {
		t.Errorf("a new caBundle: versions compiled again (%v)", err)
	}
	changed := withBundle.DeepCopy()
	changed.Generation = 3
	changed.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["color"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
	third, err := s.compile(changed)
	if err != nil || len(third) != 1 || third[0] == first[0] {
		t.Errorf("a new schema: the old versions kept (%v)", err)
	}
}
