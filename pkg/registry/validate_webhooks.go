package registry

import (
	"fmt"
	"net/url"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateWebhookClients checks each webhook's clientConfig as
// kube-apiserver does (admissionregistration's ValidateWebhookURL with
// https forced): exactly one of url and service; a url is https, with a
// host, and no user, query or fragment.
func validateWebhookClients(configs []admissionregistrationv1.WebhookClientConfig, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, cc := range configs {
		p := path.Index(i).Child("clientConfig")
		switch {
		case cc.URL == nil && cc.Service == nil:
			errs = append(errs, field.Required(p, "exactly one of url or service is required"))
		case cc.URL != nil && cc.Service != nil:
			errs = append(errs, field.Required(p, "exactly one of url or service is required"))
		case cc.URL != nil:
			errs = append(errs, validateWebhookURL(p.Child("url"), *cc.URL)...)
		}
	}
	return errs
}

func validateWebhookURL(path *field.Path, raw string) field.ErrorList {
	u, err := url.Parse(raw)
	if err != nil {
		return field.ErrorList{field.Invalid(path, raw, fmt.Sprintf("url must be a valid URL: %v", err))}
	}
	var errs field.ErrorList
	if u.Scheme != "https" {
		errs = append(errs, field.Invalid(path, u.Scheme, "'https' is the only allowed URL scheme"))
	}
	if u.Host == "" {
		errs = append(errs, field.Invalid(path, u.Host, "host must be specified"))
	}
	if u.User != nil {
		errs = append(errs, field.Invalid(path, u.User.String(), "user information is not permitted in the URL"))
	}
	if u.Fragment != "" || u.RawFragment != "" {
		errs = append(errs, field.Invalid(path, u.Fragment, "fragments are not permitted in the URL"))
	}
	if u.RawQuery != "" {
		errs = append(errs, field.Invalid(path, u.RawQuery, "query parameters are not permitted in the URL"))
	}
	return errs
}

// clientConfigsOfMutating and clientConfigsOfValidating list the client
// configurations of a webhook configuration's webhooks, in order.
func clientConfigsOfMutating(c *admissionregistrationv1.MutatingWebhookConfiguration) []admissionregistrationv1.WebhookClientConfig {
	out := make([]admissionregistrationv1.WebhookClientConfig, len(c.Webhooks))
	for i, w := range c.Webhooks {
		out[i] = w.ClientConfig
	}
	return out
}

func clientConfigsOfValidating(c *admissionregistrationv1.ValidatingWebhookConfiguration) []admissionregistrationv1.WebhookClientConfig {
	out := make([]admissionregistrationv1.WebhookClientConfig, len(c.Webhooks))
	for i, w := range c.Webhooks {
		out[i] = w.ClientConfig
	}
	return out
}
