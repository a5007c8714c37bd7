package apiserver

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	oaerrors "github.com/go-openapi/errors"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// statusOf turns any error into the metav1.Status a client gets.
func statusOf(err error) *metav1.Status {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		s := st.Status()
		return &s
	}
	return &apierrors.NewInternalError(err).ErrStatus
}

// writeError writes err as a metav1.Status in the negotiated format (JSON
// when the client accepts nothing else we serve).
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	st := statusOf(err)
	if st.Code >= 500 {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	s.writeStatus(w, r, st)
}

func (s *Server) writeStatus(w http.ResponseWriter, r *http.Request, st *metav1.Status) {
	st.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
	if st.Status == "" {
		st.Status = metav1.StatusFailure
	}
	f, ok := negotiate(originalAccept(r))
	if !ok || f.media == mediaYAML {
		f = format{media: mediaJSON}
	}
	f.shape = shapeObject
	s.writeObject(w, f, st, int(st.Code), metav1.SchemeGroupVersion.WithKind("Status"))
}

// ServeError writes an error of the generated layer (routing, parameter
// binding, body decoding) as a metav1.Status with the code the real API
// server uses for the same mistake.
func (s *Server) ServeError(w http.ResponseWriter, r *http.Request, err error) {
	s.writeError(w, r, fromOpenAPIError(r, err))
}

func fromOpenAPIError(r *http.Request, err error) error {
	var mna *oaerrors.MethodNotAllowedError
	if errors.As(err, &mna) {
		return apierrors.NewMethodNotSupported(resourceOfPath(r.URL.Path), strings.ToLower(r.Method))
	}
	var ce *oaerrors.CompositeError
	if errors.As(err, &ce) && len(ce.Errors) > 0 {
		msgs := make([]string, 0, len(ce.Errors))
		for _, e := range ce.Errors {
			if code := codeOf(e); code == http.StatusUnsupportedMediaType {
				return newUnsupportedMediaType(r.Header.Get("Content-Type"))
			}
			msgs = append(msgs, e.Error())
		}
		return apierrors.NewBadRequest(strings.Join(msgs, "; "))
	}
	switch code := codeOf(err); code {
	case http.StatusNotFound:
		return apierrors.NewNotFound(resourceOfPath(r.URL.Path), "")
	case http.StatusUnsupportedMediaType:
		return newUnsupportedMediaType(r.Header.Get("Content-Type"))
	case http.StatusNotAcceptable:
		return apierrors.NewGenericServerResponse(http.StatusNotAcceptable, r.Method, resourceOfPath(r.URL.Path), "", err.Error(), 0, false)
	case http.StatusUnauthorized:
		return apierrors.NewUnauthorized(err.Error())
	case 0, http.StatusInternalServerError:
		return apierrors.NewInternalError(err)
	default:
		// Parameter and body errors (422 in go-openapi) are 400 in Kubernetes.
		return apierrors.NewBadRequest(err.Error())
	}
}

func codeOf(err error) int {
	var oe oaerrors.Error
	if errors.As(err, &oe) {
		return int(oe.Code())
	}
	return 0
}

func newUnsupportedMediaType(ct string) error {
	return apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "", resourceOfPath(""), "",
		fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s", strings.Join(bodyMediaTypes, ", ")), 0, false)
}

// resourceOfPath guesses the group and resource named by a request path,
// for error messages.
func resourceOfPath(path string) schema.GroupResource {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var gr schema.GroupResource
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		gr.Group = parts[1]
		parts = parts[3:]
	default:
		return gr
	}
	if len(parts) > 0 && parts[0] == "watch" {
		parts = parts[1:]
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	if len(parts) > 0 {
		gr.Resource = parts[0]
	}
	return gr
}
