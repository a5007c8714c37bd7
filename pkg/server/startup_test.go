package server_test

import (
	"testing"

	"github.com/batkube/batkube/pkg/server"
)

func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		if _, err := server.New(server.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
