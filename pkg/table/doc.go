// Package table converts API objects into the server-side Tables that kubectl
// get asks for (Accept: application/json;as=Table;v=v1;g=meta.k8s.io), with the
// columns and cells a real kube-apiserver prints.
package table
