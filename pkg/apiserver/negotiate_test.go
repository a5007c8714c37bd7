package apiserver

import "testing"

func TestNegotiate(t *testing.T) {
	tests := []struct {
		accept string
		want   format
		ok     bool
	}{
		{"", format{media: mediaJSON}, true},
		{"*/*", format{media: mediaJSON}, true},
		{"application/vnd.kubernetes.protobuf, */*", format{media: mediaProtobuf}, true},
		{"application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", format{media: mediaJSON, shape: shapeTable}, true},
		{"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json", format{media: mediaJSON}, true},
		{"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json", format{media: mediaProtobuf, shape: shapeMetadata}, true},
		{"application/yaml", format{media: mediaYAML}, true},
		{"application/json;as=Table;v=v9;g=meta.k8s.io", format{}, false},
		{"text/html", format{}, false},
		{"application/json;q=0, application/yaml", format{media: mediaYAML}, true},
		{";;;,,,", format{}, false},
	}
	for _, tt := range tests {
		got, ok := negotiate(tt.accept)
		if got != tt.want || ok != tt.ok {
			t.Errorf("negotiate(%q) = %+v, %v; want %+v, %v", tt.accept, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzNegotiate(f *testing.F) {
	f.Add("application/vnd.kubernetes.protobuf, */*")
	f.Add("application/json;as=Table;v=v1;g=meta.k8s.io")
	f.Fuzz(func(t *testing.T, accept string) {
		got, ok := negotiate(accept)
		if ok && got.media != mediaJSON && got.media != mediaYAML && got.media != mediaProtobuf {
			t.Fatalf("negotiate(%q) chose %q", accept, got.media)
		}
	})
}
