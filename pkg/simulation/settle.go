package simulation

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/batkube/batkube/pkg/apiserver"
	"github.com/batkube/batkube/pkg/settle"
	"github.com/batkube/batkube/pkg/settle/kubescheduler"
)

// settleUser is who the settle policy's scrapes are, for the schedulers
// that ask this server (TokenReview); adminUser is the holder of the
// server's --token.
var (
	settleUser = authenticationv1.UserInfo{Username: "batkube:settle", UID: "batkube-settle",
		Groups: []string{"system:masters", "system:authenticated"}}
	adminUser = authenticationv1.UserInfo{Username: "batkube:admin", UID: "batkube-admin",
		Groups: []string{"system:masters", "system:authenticated"}}
)

// apiView is what the kube-scheduler policy asks the API server; set once
// the server exists (it is built after the broker that uses the policy).
type apiView struct{ api *apiserver.Server }

func (v *apiView) delivered() bool { return v.api != nil && v.api.WatchesDelivered() }

// schedulerWatchStart is where kube-scheduler's first watch of a resource
// started (kubescheduler.Options.WatchStart).
func (v *apiView) schedulerWatchStart(resource string) (uint64, bool) {
	if v.api == nil {
		return 0, false
	}
	gr := schema.GroupResource{Resource: resource}
	if resource == "podgroups" {
		gr.Group = schedulingv1beta1.GroupName
	}
	return v.api.WatchStart(gr, "kube-scheduler")
}

// parkRequest parks the simulated clock's waits (timeservice.Parker).
func (v *apiView) parkRequest(r *http.Request) (park, unpark func()) {
	if v.api == nil {
		return func() {}, func() {}
	}
	return v.api.ParkRequest(r)
}

func (v *apiView) agentVersion(product string) string {
	if v.api == nil {
		return ""
	}
	return v.api.AgentVersion(product)
}

// policy builds the settle policy of a run.
func (c SettleConfig) policy(signals *settle.Signals, token string, view *apiView, logger *slog.Logger) (settle.Policy, error) {
	quiet := settle.NewQuiet(cmp.Or(c.Quiet, 50*time.Millisecond))
	var kube settle.Policy
	if c.KubeSchedulerMetrics != "" {
		version := func() string {
			if c.KubeSchedulerVersion != "" {
				return c.KubeSchedulerVersion
			}
			return view.agentVersion("kube-scheduler")
		}
		ks, err := kubescheduler.New(kubescheduler.Options{MetricsURL: c.KubeSchedulerMetrics, Token: token,
			SchedulerNames: c.SchedulerNames, Delivered: view.delivered, WatchStart: view.schedulerWatchStart, Version: version, PIDFile: c.KubeSchedulerPIDFile,
			ReleaseAll: c.ReleaseAllGroups, Logger: logger})
		if err != nil {
			return nil, err
		}
		kube = ks
	}
	switch c.Mode {
	case "", SettleAuto:
		if kube != nil {
			return settle.NewAuto(signals, quiet, kube), nil
		}
		return settle.NewAuto(signals, quiet), nil
	case SettleKubeScheduler:
		if kube == nil {
			return nil, fmt.Errorf("settle mode %q needs the kube-scheduler's metrics URL", c.Mode)
		}
		return settle.NewAuto(nil, nil, kube), nil
	case SettleSignal:
		return settle.NewAuto(signals, nil), nil
	case SettleQuiet:
		return quiet, nil
	}
	return nil, fmt.Errorf("unknown settle mode %q (want %s, %s, %s or %s)", c.Mode, SettleAuto, SettleKubeScheduler, SettleSignal, SettleQuiet)
}

// randomToken returns a fresh bearer token.
func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating a token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
