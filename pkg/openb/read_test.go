package openb

import (
	"reflect"
	"strings"
	"testing"
)

func TestReadNodesByColumnName(t *testing.T) {
	in := "model,gpu,sn,memory_mib,cpu_milli,extra\n" +
		"V100M16,8,node-a,262144,96000,x\n" +
		",0,node-b,131072,32500,y\n"
	nodes, err := ReadNodes(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Node{
		{Name: "node-a", CPUMilli: 96000, MemMiB: 262144, GPUs: 8, Model: "V100M16"},
		{Name: "node-b", CPUMilli: 32500, MemMiB: 131072},
	}
	if !reflect.DeepEqual(nodes, want) {
		t.Errorf("nodes %+v, want %+v", nodes, want)
	}
}

func TestReadPodsKeepsEmptyTimesAndModels(t *testing.T) {
	in := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n" +
		"p0,6000,12288,1,460,V100M16|V100M32,LS,Running,10,110,20\n" +
		"p1,1000,0,0,0,,BE,Pending,30,90,\n"
	pods, err := ReadPods(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 2 {
		t.Fatalf("%d pods", len(pods))
	}
	p0, p1 := pods[0], pods[1]
	if p0.Name != "p0" || p0.CPUMilli != 6000 || p0.MemMiB != 12288 || p0.GPUs != 1 || p0.GPUMilli != 460 || p0.QoS != "LS" || p0.Phase != "Running" {
		t.Errorf("p0 %+v", p0)
	}
	if !reflect.DeepEqual(p0.GPUModels, []string{"V100M16", "V100M32"}) {
		t.Errorf("p0 models %q", p0.GPUModels)
	}
	if p0.Created != 10 || p0.Deleted == nil || *p0.Deleted != 110 || p0.Scheduled == nil || *p0.Scheduled != 20 {
		t.Errorf("p0 times %v %v %v", p0.Created, p0.Deleted, p0.Scheduled)
	}
	if p1.Scheduled != nil || p1.GPUModels != nil {
		t.Errorf("p1 %+v: want no scheduled time nor models", p1)
	}
}

func TestReadRejectsMalformedLists(t *testing.T) {
	const podHeader = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
	for _, tt := range []struct {
		name, in, want string
		pods           bool
	}{
		{name: "empty", in: "", want: "empty file"},
		{name: "missing column", in: "sn,cpu_milli,gpu,model\nn,1000,0,\n", want: "missing column(s) memory_mib"},
		{name: "negative", in: "sn,cpu_milli,memory_mib,gpu,model\nn,-1,1,0,\n", want: "line 2: column cpu_milli"},
		{name: "not a number", in: "sn,cpu_milli,memory_mib,gpu,model\nn,1000,1,two,\n", want: "line 2: column gpu"},
		{name: "duplicate node", in: "sn,cpu_milli,memory_mib,gpu,model\nn,1000,1,0,\nn,1000,1,0,\n", want: "line 3: node n already on line 2"},
		{name: "short line", in: "sn,cpu_milli,memory_mib,gpu,model\nn,1000,1\n", want: "wrong number of fields"},
		{name: "no creation time", pods: true, in: podHeader + "p,1000,1,0,0,,BE,Running,,5,1\n", want: "line 2: column creation_time: empty"},
		{name: "bad time", pods: true, in: podHeader + "p,1000,1,0,0,,BE,Running,0,soon,1\n", want: "line 2: column deletion_time"},
		{name: "empty model", pods: true, in: podHeader + "p,1000,1,1,1000,A||B,BE,Running,0,5,1\n", want: "column gpu_spec"},
		{name: "duplicate pod", pods: true, in: podHeader + "p,1000,1,0,0,,BE,Running,0,5,1\np,1000,1,0,0,,BE,Running,0,5,1\n", want: "pod p already on line 2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.pods {
				_, err = ReadPods(strings.NewReader(tt.in))
			} else {
				_, err = ReadNodes(strings.NewReader(tt.in))
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
