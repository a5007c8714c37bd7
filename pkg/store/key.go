package store

import (
	"strings"

	"github.com/google/btree"
)

// key locates an object within one resource. Keys sort by namespace, then
// name, like the apiserver's etcd keys.
type key struct {
	namespace string
	name      string
}

func keyOf(obj Object) key { return key{namespace: obj.GetNamespace(), name: obj.GetName()} }

func (k key) less(o key) bool {
	if k.namespace != o.namespace {
		return k.namespace < o.namespace
	}
	return k.name < o.name
}

func (k key) compare(o key) int {
	if c := strings.Compare(k.namespace, o.namespace); c != 0 {
		return c
	}
	return strings.Compare(k.name, o.name)
}

// String is the key's form in continue tokens: "namespace/name" ("/name" for
// cluster-scoped objects). Neither part can contain a slash.
func (k key) String() string { return k.namespace + "/" + k.name }

// entry is an item of a resource's ordered table.
type entry struct {
	key key
	obj *Stored
}

func entryLess(a, b entry) bool { return a.key.less(b.key) }

// table holds the current objects of one resource in key order.
type table = btree.BTreeG[entry]

func newTable() *table { return btree.NewG(32, entryLess) }
