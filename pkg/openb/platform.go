package openb

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// PlatformOptions tune WritePlatform.
type PlatformOptions struct {
	// ExclusiveGPUs publishes every GPU as an exclusive device (no
	// gpu_shared property): the cluster without GPU sharing.
	ExclusiveGPUs bool
	// Comment, if set, is written as the platform's XML comment.
	Comment string
}

// MasterHost is the host Batsim reserves for itself, as in every Batkube
// platform; it is not a node.
const MasterHost = "master_host"

// WritePlatform writes the SimGrid platform of the nodes: a master host,
// then one host a node, named after it, with the properties Batkube turns
// into a node and its devices: core (cpu_milli as a Kubernetes quantity:
// whole cores as an integer, "32500m" otherwise, so no fraction is lost),
// memory (memory_mib as "262144Mi"), and, for a node with GPUs, gpu (the
// count), gpu_model (when the list names one) and gpu_shared="true"
// (unless opts.ExclusiveGPUs). A node's model is ignored when it has no
// GPU.
func WritePlatform(out io.Writer, nodes []Node, opts PlatformOptions) error {
	bw := bufio.NewWriter(out)
	bw.WriteString("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n")
	if opts.Comment != "" {
		fmt.Fprintf(bw, "<!-- %s -->\n", xmlComment(opts.Comment))
	}
	bw.WriteString("<platform version=\"4.1\">\n  <zone id=\"cluster\" routing=\"Full\">\n")
	fmt.Fprintf(bw, "    <host id=%q speed=\"1Gf\"/>\n", MasterHost)
	for _, n := range nodes {
		if n.Name == MasterHost {
			return fmt.Errorf("node %s: the name of the master host", n.Name)
		}
		fmt.Fprintf(bw, "    <host id=\"%s\" speed=\"1Gf\">", xmlText(n.Name))
		prop(bw, "core", CPUQuantity(n.CPUMilli))
		prop(bw, "memory", strconv.FormatInt(n.MemMiB, 10)+"Mi")
		if n.GPUs > 0 {
			prop(bw, "gpu", strconv.Itoa(n.GPUs))
			if n.Model != "" {
				prop(bw, "gpu_model", n.Model)
			}
			if !opts.ExclusiveGPUs {
				prop(bw, "gpu_shared", "true")
			}
		}
		bw.WriteString("</host>\n")
	}
	bw.WriteString("  </zone>\n</platform>\n")
	return bw.Flush()
}

func prop(w *bufio.Writer, id, value string) {
	fmt.Fprintf(w, "<prop id=\"%s\" value=\"%s\"/>", xmlText(id), xmlText(value))
}

// CPUQuantity writes thousandths of a core as a Kubernetes quantity:
// "32" for whole cores, "3152m" otherwise.
func CPUQuantity(milli int64) string {
	if milli%1000 == 0 {
		return strconv.FormatInt(milli/1000, 10)
	}
	return strconv.FormatInt(milli, 10) + "m"
}

func xmlText(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s)) //nolint:errcheck // a strings.Builder does not fail
	return b.String()
}

// xmlComment keeps "--" out of a comment, which XML forbids there.
func xmlComment(s string) string {
	out := []byte(s)
	for i := 1; i < len(out); i++ {
		if out[i] == '-' && out[i-1] == '-' {
			out[i] = '_'
		}
	}
	return string(out)
}
