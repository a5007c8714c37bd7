// Command manifests writes Kueue's installation manifests to standard
// output: kustomize's build of config/default in the directory of the
// sigs.k8s.io/kueue module (its argument), the manifests a release
// publishes (its CRDs with their conversion webhooks, its webhook
// configurations, Service, RBAC and Deployment). batkube-run --kueue takes
// the objects a simulated cluster needs from them (make upstream writes
// them to bin/kueue-manifests.yaml).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: manifests KUEUE_MODULE_DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "manifests:", err)
		os.Exit(1)
	}
}

func run(moduleDir string) error {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resources, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(moduleDir, "config", "default"))
	if err != nil {
		return fmt.Errorf("kustomize build of %s: %w", moduleDir, err)
	}
	out, err := resources.AsYaml()
	if err != nil {
		return fmt.Errorf("writing the manifests: %w", err)
	}
	_, err = os.Stdout.Write(out)
	return err
}
